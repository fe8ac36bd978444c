package deployment

import (
	"strings"
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/controllers/replicaset"
	"github.com/berth-sim/berth/internal/sim"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestResolveFenceposts(t *testing.T) {
	pct := intstr.FromString("25%")
	zero := intstr.FromInt32(0)
	cases := []struct {
		replicas               int32
		surge, unavailable     *intstr.IntOrString
		wantSurge, wantUnavail int32
	}{
		// The EKS workshop's rollout with the 25%/25% defaults.
		{1, &pct, &pct, 1, 0},
		{2, &pct, &pct, 1, 0},
		{3, &pct, &pct, 1, 0},
		{4, &pct, &pct, 1, 1},
		{10, &pct, &pct, 3, 2},
		// Both zero: one may be unavailable.
		{5, &zero, &zero, 0, 1},
		{0, &pct, &pct, 0, 1},
	}
	for _, c := range cases {
		surge, unavail, err := ResolveFenceposts(c.surge, c.unavailable, c.replicas)
		if err != nil {
			t.Fatal(err)
		}
		if surge != c.wantSurge || unavail != c.wantUnavail {
			t.Errorf("replicas %d: got surge %d unavailable %d, want %d %d", c.replicas, surge, unavail, c.wantSurge, c.wantUnavail)
		}
	}
}

func TestNewRSNewReplicas(t *testing.T) {
	rs := func(n int32) *appsv1.ReplicaSet { return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: &n}} }
	cases := []struct {
		name       string
		replicas   int32
		old, newRS int32
		want       int32
	}{
		{"fresh deployment takes all", 3, 0, 0, 3},
		{"one replica surges by one", 1, 1, 0, 1},
		{"surge budget spent", 1, 1, 1, 1},
		{"ten replicas surge by three", 10, 10, 0, 3},
		{"capped at desired", 4, 0, 3, 4},
		{"old already gone", 10, 7, 3, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &c.replicas}}
			admission.DefaultDeployment(d)
			newRS := rs(c.newRS)
			got := NewRSNewReplicas(d, []*appsv1.ReplicaSet{rs(c.old), newRS}, newRS)
			if got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
		})
	}
}

func controllers() []sim.Controller {
	return []sim.Controller{New(), replicaset.New(), controllertest.Binder{}, kubelet.New()}
}

func uiDeployment() *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": "ui"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "ui", Image: "public.ecr.aws/ui:0.4.0"}}},
			},
		},
	}
}

func ownedReplicaSets(s *cluster.State) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, k := range cluster.SortedKeys(s.ReplicaSets) {
		out = append(out, s.ReplicaSets[k])
	}
	sortByCreation(out)
	return out
}

func settle(t *testing.T, s *cluster.State) {
	t.Helper()
	if err := sim.Settle(s, controllers(), sim.DefaultSettleHorizon); err != nil {
		t.Fatal(err)
	}
}

func update(t *testing.T, s *cluster.State, mutate func(*appsv1.Deployment)) {
	t.Helper()
	d := s.Deployments["ui/ui"].DeepCopy()
	mutate(d)
	if _, err := admission.Update(s, d); err != nil {
		t.Fatal(err)
	}
	s.Now = s.Now.Add(8 * time.Minute)
}

// TestSeed000Rollout plays seed 000: a one-replica deployment, a nodeSelector
// nothing tolerates (the rollout sticks, the old pod stays), then a
// toleration (a third ReplicaSet takes over, both old ones go to zero).
func TestSeed000Rollout(t *testing.T) {
	s := controllertest.NewState("ui")
	admission.Create(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui"}})
	controllertest.AddNode(s, "amd-1", "2", "4Gi", map[string]string{"kubernetes.io/arch": "amd64"})
	controllertest.AddNode(s, "arm-1", "2", "4Gi", map[string]string{"kubernetes.io/arch": "arm64"},
		corev1.Taint{Key: "frontend", Value: "true", Effect: corev1.TaintEffectNoExecute})
	if err := admission.Create(s, uiDeployment()); err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	d := s.Deployments["ui/ui"]
	rss := ownedReplicaSets(s)
	if len(rss) != 1 || rss[0].Name != "ui-"+rss[0].Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey] {
		t.Fatalf("want one ReplicaSet named ui-<hash>, got %v", rss)
	}
	if d.Status.AvailableReplicas != 1 || d.Status.UpdatedReplicas != 1 || d.Annotations[RevisionAnnotation] != "1" {
		t.Fatalf("initial rollout incomplete: %+v", d.Status)
	}
	if c := getCondition(&d.Status, appsv1.DeploymentProgressing); c == nil || c.Reason != NewRSAvailableReason ||
		c.Message != `ReplicaSet "`+rss[0].Name+`" has successfully progressed.` {
		t.Fatalf("Progressing = %+v", c)
	}
	if c := getCondition(&d.Status, appsv1.DeploymentAvailable); c == nil || c.Reason != MinimumReplicasAvailable {
		t.Fatalf("Available = %+v", c)
	}

	update(t, s, func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/arch": "arm64"}
	})
	settle(t, s)
	d = s.Deployments["ui/ui"]
	rss = ownedReplicaSets(s)
	if len(rss) != 2 || *rss[0].Spec.Replicas != 1 || *rss[1].Spec.Replicas != 1 {
		t.Fatalf("want old and new ReplicaSets at 1 each, got %d sets", len(rss))
	}
	newPods := replicaset.ActivePods(s, rss[1])
	if len(newPods) != 1 || newPods[0].Status.Phase != corev1.PodPending || newPods[0].Spec.NodeName != "" {
		t.Fatalf("new pod should be Pending and unbound: %+v", newPods)
	}
	// rollout status: replicas > updated → "1 old replicas are pending termination..."
	if d.Status.Replicas-d.Status.UpdatedReplicas != 1 || d.Status.UpdatedReplicas != 1 || d.Status.ObservedGeneration != d.Generation || d.Generation != 2 {
		t.Fatalf("stuck rollout status wrong: gen %d %+v", d.Generation, d.Status)
	}
	if d.Status.UnavailableReplicas != 1 || d.Annotations[RevisionAnnotation] != "2" {
		t.Fatalf("unavailable %d revision %q", d.Status.UnavailableReplicas, d.Annotations[RevisionAnnotation])
	}

	update(t, s, func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "frontend", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	})
	settle(t, s)
	d = s.Deployments["ui/ui"]
	rss = ownedReplicaSets(s)
	if len(rss) != 3 {
		t.Fatalf("want 3 ReplicaSets, got %d", len(rss))
	}
	if *rss[0].Spec.Replicas != 0 || *rss[1].Spec.Replicas != 0 || *rss[2].Spec.Replicas != 1 {
		t.Fatalf("replicas = %d %d %d, want 0 0 1", *rss[0].Spec.Replicas, *rss[1].Spec.Replicas, *rss[2].Spec.Replicas)
	}
	pods := replicaset.ActivePods(s, rss[2])
	if len(s.Pods) != 1 || len(pods) != 1 || pods[0].Spec.NodeName != "arm-1" || pods[0].Status.Phase != corev1.PodRunning {
		t.Fatalf("want the single pod Running on arm-1, got %d pods", len(s.Pods))
	}
	if !DeploymentComplete(d, &d.Status) || d.Annotations[RevisionAnnotation] != "3" {
		t.Fatalf("rollout not complete: %+v", d.Status)
	}
	var msgs []string
	for _, e := range s.EventsFor("Deployment", "ui", "ui") {
		msgs = append(msgs, e.Message)
	}
	want := []string{
		"Scaled up replica set " + rss[0].Name + " from 0 to 1",
		"Scaled up replica set " + rss[1].Name + " from 0 to 1",
		"Scaled down replica set " + rss[1].Name + " from 1 to 0",
		"Scaled up replica set " + rss[2].Name + " from 0 to 1",
		"Scaled down replica set " + rss[0].Name + " from 1 to 0",
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}

func TestNamingIsDeterministic(t *testing.T) {
	run := func() []string {
		s := controllertest.NewState("ui")
		admission.Create(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui"}})
		controllertest.AddNode(s, "n1", "4", "8Gi", nil)
		d := uiDeployment()
		three := int32(3)
		d.Spec.Replicas = &three
		admission.Create(s, d)
		settle(t, s)
		return append(cluster.SortedKeys(s.ReplicaSets), cluster.SortedKeys(s.Pods)...)
	}
	a, b := run(), run()
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Fatalf("names differ between runs:\n%v\n%v", a, b)
	}
	if len(a) != 4 {
		t.Fatalf("want 1 ReplicaSet and 3 pods, got %v", a)
	}
	for _, p := range a[1:] {
		if !strings.HasPrefix(p, a[0]+"-") || len(p) != len(a[0])+6 {
			t.Errorf("pod %q is not <rs>-<5 chars>", p)
		}
	}
}

func TestRecreate(t *testing.T) {
	s := controllertest.NewState("ui")
	admission.Create(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui"}})
	controllertest.AddNode(s, "n1", "4", "8Gi", nil)
	d := uiDeployment()
	two := int32(2)
	d.Spec.Replicas = &two
	d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
	admission.Create(s, d)
	settle(t, s)
	update(t, s, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "public.ecr.aws/ui:0.5.0" })
	// One instant: the old set goes to zero; its pods are Terminating for
	// their grace period, and the new set waits for them to be gone.
	if err := sim.RunNow(s, controllers()); err != nil {
		t.Fatal(err)
	}
	rss := ownedReplicaSets(s)
	if len(rss) != 1 || *rss[0].Spec.Replicas != 0 {
		t.Fatalf("recreate must scale the old set down and wait: %d sets", len(rss))
	}
	terminating := 0
	for _, p := range s.Pods {
		if p.DeletionTimestamp != nil {
			terminating++
		}
	}
	if terminating != 2 {
		t.Fatalf("%d old pods Terminating, want 2", terminating)
	}
	settle(t, s)
	rss = ownedReplicaSets(s)
	if len(rss) != 2 || *rss[0].Spec.Replicas != 0 || *rss[1].Spec.Replicas != 2 {
		t.Fatalf("recreate did not swap sets: %d sets", len(rss))
	}
	msgs := []string{}
	for _, e := range s.EventsFor("Deployment", "ui", "ui") {
		msgs = append(msgs, e.Message)
	}
	if got := msgs[len(msgs)-2]; got != "Scaled down replica set "+rss[0].Name+" from 2 to 0" {
		t.Fatalf("scale-down must come first, got %q", got)
	}
}

func TestRevisionHistoryCleanup(t *testing.T) {
	s := controllertest.NewState("ui")
	admission.Create(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui"}})
	controllertest.AddNode(s, "n1", "4", "8Gi", nil)
	d := uiDeployment()
	one := int32(1)
	d.Spec.RevisionHistoryLimit = &one
	admission.Create(s, d)
	settle(t, s)
	for _, tag := range []string{"2", "3", "4"} {
		update(t, s, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "ui:" + tag })
		settle(t, s)
	}
	rss := ownedReplicaSets(s)
	if len(rss) != 2 {
		t.Fatalf("want the current set plus 1 old one, got %d", len(rss))
	}
	if revision(rss[0]) != 3 || revision(rss[1]) != 4 {
		t.Fatalf("kept revisions %d and %d, want 3 and 4", revision(rss[0]), revision(rss[1]))
	}
}

func TestProgressDeadline(t *testing.T) {
	s := controllertest.NewState("ui")
	admission.Create(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui"}})
	// No node: the pod never schedules.
	d := uiDeployment()
	admission.Create(s, d)
	settle(t, s)
	d = s.Deployments["ui/ui"]
	if c := getCondition(&d.Status, appsv1.DeploymentProgressing); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("Progressing = %+v", c)
	}
	if s.Now != cluster.Epoch {
		t.Fatalf("settle must not wait for the progress deadline, now %v", s.Now)
	}
	if err := sim.Advance(s, controllers(), 11*time.Minute); err != nil {
		t.Fatal(err)
	}
	c := getCondition(&d.Status, appsv1.DeploymentProgressing)
	rs := ownedReplicaSets(s)[0]
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != TimedOutReason ||
		c.Message != `ReplicaSet "`+rs.Name+`" has timed out progressing.` {
		t.Fatalf("Progressing = %+v", c)
	}
	if want := cluster.Epoch.Add(601 * time.Second); !c.LastTransitionTime.Time.Equal(want) {
		t.Fatalf("timed out at %v, want %v", c.LastTransitionTime, want)
	}
}
