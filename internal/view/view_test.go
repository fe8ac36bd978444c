package view

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestGet(t *testing.T) {
	tests := []struct {
		name       string
		opts       GetOptions
		want       string
		wantErr    string
		wantErrOut string
	}{
		{name: "seed 000 pods", opts: GetOptions{Args: []string{"pod"}, Namespace: "ui", LabelSelector: "app.kubernetes.io/name=ui"},
			want: "NAME                  READY   STATUS    RESTARTS   AGE\n" +
				"ui-659df48c56-z496x   0/1     Pending   0          16s\n" +
				"ui-795bd46545-mrglh   1/1     Running   0          8m\n"},
		{name: "field selector", opts: GetOptions{Args: []string{"po"}, Namespace: "ui", FieldSelector: "status.phase!=Pending", NoHeaders: true},
			want: "ui-795bd46545-mrglh   1/1   Running   0     8m\n"},
		{name: "jsonpath over a list", opts: GetOptions{Args: []string{"pods"}, Namespace: "ui", FieldSelector: "status.phase==Pending", Output: "jsonpath={.items[0].metadata.name}"},
			want: "ui-659df48c56-z496x"},
		{name: "name output", opts: GetOptions{Args: []string{"deploy,pods"}, Namespace: "ui", Output: "name"},
			want: "deployment.apps/ui\npod/ui-659df48c56-z496x\npod/ui-795bd46545-mrglh\n"},
		{name: "all prefixes kinds and separates groups", opts: GetOptions{Args: []string{"all"}, Namespace: "ui"},
			want: "NAME                      READY   STATUS    RESTARTS   AGE\n" +
				"pod/ui-659df48c56-z496x   0/1     Pending   0          16s\n" +
				"pod/ui-795bd46545-mrglh   1/1     Running   0          8m\n\n" +
				"NAME                 READY   UP-TO-DATE   AVAILABLE   AGE\n" +
				"deployment.apps/ui   1/1     1            1           9m\n"},
		{name: "nodes wide", opts: GetOptions{Args: []string{"nodes"}, Output: "wide"},
			want: "NAME                                         STATUS   ROLES    AGE   VERSION               INTERNAL-IP    EXTERNAL-IP   OS-IMAGE                       KERNEL-VERSION                    CONTAINER-RUNTIME\n" +
				"ip-10-42-10-138.us-west-2.compute.internal   Ready    <none>   20m   v1.34.2-eks-1234567   10.42.10.138   <none>        Amazon Linux 2023.9.20251110   6.12.46-66.121.amzn2023.aarch64   containerd://2.1.4\n"},
		{name: "all namespaces adds NAMESPACE", opts: GetOptions{Args: []string{"deployments"}, AllNamespaces: true},
			want: "NAMESPACE   NAME   READY   UP-TO-DATE   AVAILABLE   AGE\nui          ui     1/1     1            1           9m\n"},
		{name: "empty namespaced", opts: GetOptions{Args: []string{"pods"}}, wantErrOut: "No resources found in default namespace.\n"},
		{name: "empty cluster-scoped", opts: GetOptions{Args: []string{"pc"}}, wantErrOut: "No resources found\n"},
		{name: "unknown type", opts: GetOptions{Args: []string{"foo"}}, wantErr: `error: the server doesn't have a resource type "foo"`},
		{name: "not found", opts: GetOptions{Args: []string{"pod", "x"}, Namespace: "ui"}, wantErr: `Error from server (NotFound): pods "x" not found`},
		{name: "bad field", opts: GetOptions{Args: []string{"pods"}, Namespace: "ui", FieldSelector: "foo=bar"},
			wantErr: `Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "", field selector "foo=bar": field label not supported: foo`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			tc.opts.ErrOut = &errOut
			err := Get(&out, seedState(), tc.opts)
			if got := errString(err); got != tc.wantErr {
				t.Fatalf("error = %q, want %q", got, tc.wantErr)
			}
			if out.String() != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), tc.want)
			}
			if errOut.String() != tc.wantErrOut {
				t.Errorf("stderr = %q, want %q", errOut.String(), tc.wantErrOut)
			}
		})
	}
}

func TestGetSingleObjectYAMLAndList(t *testing.T) {
	s := seedState()
	var out bytes.Buffer
	if err := Get(&out, s, GetOptions{Args: []string{"ns/ui"}, Output: "yaml"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "apiVersion: v1\nkind: Namespace\nmetadata:\n") {
		t.Errorf("single object yaml:\n%s", out.String())
	}
	out.Reset()
	if err := Get(&out, s, GetOptions{Args: []string{"ns"}, Output: "yaml"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n") ||
		!strings.HasSuffix(out.String(), "kind: List\nmetadata:\n  resourceVersion: \"\"\n") {
		t.Errorf("list yaml:\n%s", out.String())
	}
}

func TestPodStatusColumn(t *testing.T) {
	s := seedState()
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   string
	}{
		{name: "pending", mutate: func(*corev1.Pod) {}, want: "Pending"},
		{name: "status reason", mutate: func(p *corev1.Pod) { p.Status.Phase, p.Status.Reason = corev1.PodFailed, "OutOfcpu" }, want: "OutOfcpu"},
		{name: "container creating", mutate: func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ui", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
		}, want: "ContainerCreating"},
		{name: "terminating", mutate: func(p *corev1.Pod) { ts := metav1.NewTime(s.Now); p.DeletionTimestamp = &ts }, want: "Terminating"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := s.Pods["ui/ui-659df48c56-z496x"].DeepCopy()
			tc.mutate(p)
			if got := podRow(s, p).Cells[2]; got != tc.want {
				t.Errorf("STATUS = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeStatusAndRoles(t *testing.T) {
	s := seedState()
	n := gravitonNode(s)
	n.Spec.Unschedulable = true
	n.Labels["node-role.kubernetes.io/worker"] = ""
	r := nodeRow(s, n)
	if r.Cells[1] != "Ready,SchedulingDisabled" || r.Cells[2] != "worker" {
		t.Errorf("status/roles = %v/%v", r.Cells[1], r.Cells[2])
	}
	n.Status.Conditions[0].Status = corev1.ConditionFalse
	if got := nodeStatusText(n); got != "NotReady,SchedulingDisabled" {
		t.Errorf("status = %q", got)
	}
}

func TestDescribePodSeed000(t *testing.T) {
	var out bytes.Buffer
	if err := Describe(&out, seedState(), "pod", "ui", []string{"ui-659df48c56-z496x"}, ""); err != nil {
		t.Fatal(err)
	}
	want := "QoS Class:                   Burstable\n" +
		"Node-Selectors:              kubernetes.io/arch=arm64\n" +
		"Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n" +
		"                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s\n" +
		"Events:\n" +
		"  Type     Reason            Age   From               Message\n" +
		"  ----     ------            ----  ----               -------\n" +
		"  Warning  FailedScheduling  19s   default-scheduler  0/4 nodes are available: 1 node(s) had untolerated taint {frontend: true}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Errorf("tail:\n%s", out.String())
	}
	for _, line := range []string{"Name:             ui-659df48c56-z496x\n", "Service Account:  ui\n", "Node:             <none>\n",
		"Controlled By:    ReplicaSet/ui-659df48c56\n"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("missing %q in\n%s", line, out.String())
		}
	}
}

func TestDescribeBySelectorSeparatesObjects(t *testing.T) {
	var out bytes.Buffer
	if err := Describe(&out, seedState(), "po", "ui", nil, "app.kubernetes.io/name=ui"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "\n\n\nName:"); got != 1 {
		t.Errorf("separators = %d in\n%s", got, out.String())
	}
	err := Describe(&out, seedState(), "po", "ui", nil, "app=none")
	var none *NoResourcesFound
	if !errors.As(err, &none) || err.Error() != "No resources found in ui namespace." {
		t.Errorf("err = %v", err)
	}
}

// TestDescribeSpec13 rebuilds the live describe block quoted in
// kubectl describe's layout: four tolerations, a spread constraint, a
// three-event series and a Scheduled event; a cordoned node with three taints.
func TestDescribeSpec13(t *testing.T) {
	s := cluster.New("", 1)
	s.Now = cluster.Epoch.Add(time.Hour)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", UID: "u1", CreationTimestamp: at(s, 2*time.Minute)},
		Spec: corev1.PodSpec{
			Containers:   []corev1.Container{{Name: "web", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: *resourceQ("1")}}}},
			NodeSelector: map[string]string{"disktype": "ssd", "arch": "amd64"},
			Tolerations: append([]corev1.Toleration{
				{Key: "frontend", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
			}, defaultTolerations...),
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
		},
	}
	s.Pods["default/web-0"] = pod
	src := cluster.EventSource{Component: "default-scheduler", Series: true}
	ref := cluster.Regarding("Pod", "v1", pod)
	msg := "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
	base := s.Now
	for _, ago := range []time.Duration{95 * time.Second, 60 * time.Second, 20 * time.Second} {
		s.Now = base.Add(-ago)
		s.Record(src, ref, corev1.EventTypeWarning, "FailedScheduling", msg)
	}
	s.Now = base.Add(-5 * time.Second)
	s.Record(src, ref, corev1.EventTypeNormal, "Scheduled", "Successfully assigned default/web-0 to node-1")
	s.Now = base

	var out bytes.Buffer
	if err := Describe(&out, s, "pod", "default", []string{"web-0"}, ""); err != nil {
		t.Fatal(err)
	}
	want := "QoS Class:                    Burstable\n" +
		"Node-Selectors:               arch=amd64\n" +
		"                              disktype=ssd\n" +
		"Tolerations:                  dedicated=gpu:NoSchedule\n" +
		"                              frontend:NoExecute op=Exists\n" +
		"                              node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n" +
		"                              node.kubernetes.io/unreachable:NoExecute op=Exists for 300s\n" +
		"Topology Spread Constraints:  topology.kubernetes.io/zone:DoNotSchedule when max skew 1 is exceeded for selector app=web\n" +
		"Events:\n" +
		"  Type     Reason            Age                From               Message\n" +
		"  ----     ------            ----               ----               -------\n" +
		"  Warning  FailedScheduling  20s (x3 over 95s)  default-scheduler  " + msg + "\n" +
		"  Normal   Scheduled         5s                 default-scheduler  Successfully assigned default/web-0 to node-1\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Errorf("got:\n%s\nwant suffix:\n%s", out.String(), want)
	}

	node := gravitonNode(s)
	node.Spec.Unschedulable = true
	node.Spec.Taints = []corev1.Taint{
		{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule},
		{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule},
		{Key: "frontend", Value: "true", Effect: corev1.TaintEffectNoExecute},
	}
	s.Nodes[node.Name] = node
	out.Reset()
	if err := Describe(&out, s, "node", "", []string{node.Name}, ""); err != nil {
		t.Fatal(err)
	}
	wantNode := "Taints:             frontend=true:NoExecute\n" +
		"                    node.kubernetes.io/unschedulable:NoSchedule\n" +
		"                    soft:PreferNoSchedule\n" +
		"Unschedulable:      true\n"
	if !strings.Contains(out.String(), wantNode) {
		t.Errorf("node describe:\n%s", out.String())
	}
}

func TestDescribeNodeSeed000(t *testing.T) {
	s := seedState()
	running := s.Pods["ui/ui-795bd46545-mrglh"]
	running.Spec.NodeName = "ip-10-42-10-138.us-west-2.compute.internal"
	var out bytes.Buffer
	if err := Describe(&out, s, "nodes", "", nil, "kubernetes.io/arch=arm64"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Name:               ip-10-42-10-138.us-west-2.compute.internal\nRoles:              <none>\nLabels:             beta.kubernetes.io/instance-type=t4g.medium\n",
		"                    node.kubernetes.io/instance-type=t4g.medium\n",
		"Taints:             frontend=true:NoExecute\nUnschedulable:      false\n",
		"Non-terminated Pods:          (1 in total)\n",
		// 250m of 1930m is 12.95% -> 12%; 1536Mi of 3388364Ki is 46.4% -> 46%.
		"  ui                          ui-795bd46545-mrglh    250m (12%)    0 (0%)      1536Mi (46%)     1536Mi (46%)   8m\n",
		"  cpu                250m (12%)    0 (0%)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}

func TestDescribeDeployment(t *testing.T) {
	s := seedState()
	d := s.Deployments["ui/ui"]
	for _, h := range []string{"795bd46545", "659df48c56"} {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "ui-" + h, Namespace: "ui", UID: types.UID("uid-rs-" + h),
			Labels:          map[string]string{"app.kubernetes.io/name": "ui", "pod-template-hash": h},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "ui", UID: d.UID, Controller: ptr(true)}}},
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr(int32(1)), Selector: d.Spec.Selector, Template: *d.Spec.Template.DeepCopy()},
			Status: appsv1.ReplicaSetStatus{Replicas: 1}}
		rs.Spec.Template.Labels["pod-template-hash"] = h
		if h == "795bd46545" {
			rs.Spec.Template.Spec.Containers[0].Image = "old"
		}
		s.ReplicaSets[cluster.Key("ui", rs.Name)] = rs
	}
	var out bytes.Buffer
	if err := Describe(&out, s, "deployment", "ui", []string{"ui"}, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Replicas:               1 desired | 1 updated | 2 total | 1 available | 1 unavailable\n",
		"RollingUpdateStrategy:  25% max unavailable, 25% max surge\n",
		"OldReplicaSets:    ui-795bd46545 (1/1 replicas created)\nNewReplicaSet:     ui-659df48c56 (1/1 replicas created)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Describe(&out, s, "rs", "ui", []string{"ui-659df48c56"}, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Pods Status:    0 Running / 1 Waiting / 0 Succeeded / 0 Failed\n") {
		t.Errorf("rs describe:\n%s", out.String())
	}
}

func TestRolloutStatus(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(d *appsv1.Deployment)
		want     string
		wantDone bool
		wantErr  string
	}{
		{name: "old pending termination", mutate: func(*appsv1.Deployment) {},
			want: "Waiting for deployment \"ui\" rollout to finish: 1 old replicas are pending termination...\n"},
		{name: "spec not observed", mutate: func(d *appsv1.Deployment) { d.Generation = 3 },
			want: "Waiting for deployment spec update to be observed...\n"},
		{name: "not updated", mutate: func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 0 },
			want: "Waiting for deployment \"ui\" rollout to finish: 0 out of 1 new replicas have been updated...\n"},
		{name: "not available", mutate: func(d *appsv1.Deployment) { d.Status.Replicas, d.Status.AvailableReplicas = 1, 0 },
			want: "Waiting for deployment \"ui\" rollout to finish: 0 of 1 updated replicas are available...\n"},
		{name: "done", mutate: func(d *appsv1.Deployment) { d.Status.Replicas = 1 },
			want: "deployment \"ui\" successfully rolled out\n", wantDone: true},
		{name: "deadline", mutate: func(d *appsv1.Deployment) {
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Reason: "ProgressDeadlineExceeded"}}
		}, wantErr: `error: deployment "ui" exceeded its progress deadline`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := seedState()
			tc.mutate(s.Deployments["ui/ui"])
			var out bytes.Buffer
			done, err := RolloutStatus(&out, s, "deploy/ui", "ui", false, 0)
			if errString(err) != tc.wantErr || done != tc.wantDone || out.String() != tc.want {
				t.Errorf("got %q, %v, %v", out.String(), done, err)
			}
		})
	}
	_, err := RolloutStatus(&bytes.Buffer{}, seedState(), "deployment/nope", "ui", false, 0)
	if errString(err) != `Error from server (NotFound): deployments.apps "nope" not found` {
		t.Errorf("err = %v", err)
	}
}

func TestEvents(t *testing.T) {
	s := seedState()
	var out bytes.Buffer
	if err := Events(&out, s, "ui", true); err != nil {
		t.Fatal(err)
	}
	want := "NAMESPACE   LAST SEEN   TYPE      REASON             OBJECT                    MESSAGE\n" +
		"ui          19s         Warning   FailedScheduling   Pod/ui-659df48c56-z496x   0/4 nodes are available: 1 node(s) had untolerated taint {frontend: true}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.\n"
	if out.String() != want {
		t.Errorf("got:\n%s", out.String())
	}
	if err := Events(&out, s, "other", false); errString(err) != "No events found in other namespace." {
		t.Errorf("err = %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
