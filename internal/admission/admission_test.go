package admission

import (
	"strings"
	"testing"

	"github.com/berth-sim/berth/internal/cluster"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newState(t *testing.T) *cluster.State {
	t.Helper()
	s := cluster.New("", 1)
	if err := Bootstrap(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func i64(v int64) *int64 { return &v }

func TestDefaultTolerationSeconds(t *testing.T) {
	notReady := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: i64(300)}
	unreachable := corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: i64(300)}
	frontend := corev1.Toleration{Key: "frontend", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	cases := []struct {
		name string
		in   []corev1.Toleration
		want []corev1.Toleration
	}{
		{"none", nil, []corev1.Toleration{notReady, unreachable}},
		{"unrelated toleration kept first", []corev1.Toleration{frontend}, []corev1.Toleration{frontend, notReady, unreachable}},
		{"own not-ready kept", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: i64(5)}},
			[]corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: i64(5)}, unreachable}},
		{"empty effect counts", []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists}},
			[]corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists}, notReady}},
		{"NoSchedule does not count", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			[]corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}, notReady, unreachable}},
		{"tolerate everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: c.in}}
			AddDefaultTolerations(pod)
			if len(pod.Spec.Tolerations) != len(c.want) {
				t.Fatalf("got %v, want %v", pod.Spec.Tolerations, c.want)
			}
			for i := range c.want {
				if !pod.Spec.Tolerations[i].MatchToleration(&c.want[i]) ||
					(c.want[i].TolerationSeconds == nil) != (pod.Spec.Tolerations[i].TolerationSeconds == nil) ||
					(c.want[i].TolerationSeconds != nil && *c.want[i].TolerationSeconds != *pod.Spec.Tolerations[i].TolerationSeconds) {
					t.Errorf("toleration %d = %+v, want %+v", i, pod.Spec.Tolerations[i], c.want[i])
				}
			}
		})
	}
}

func basicPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
}

func TestPriorityAdmission(t *testing.T) {
	never := corev1.PreemptNever
	cases := []struct {
		name       string
		classes    []*schedulingv1.PriorityClass
		pod        func() *corev1.Pod
		wantErr    string
		wantValue  int32
		wantClass  string
		wantPolicy corev1.PreemptionPolicy
	}{
		{name: "no class, no default", pod: func() *corev1.Pod { return basicPod("a") }, wantPolicy: corev1.PreemptLowerPriority},
		{name: "unknown class", pod: func() *corev1.Pod { p := basicPod("x"); p.Spec.PriorityClassName = "y"; return p },
			wantErr: `pods "x" is forbidden: no PriorityClass with name y was found`},
		{name: "unknown class with generateName", pod: func() *corev1.Pod {
			p := basicPod("")
			p.GenerateName = "ui-659df48c56-"
			p.Spec.PriorityClassName = "gold"
			return p
		}, wantErr: `pods "ui-659df48c56-" is forbidden: no PriorityClass with name gold was found`},
		{name: "built-in node critical", pod: func() *corev1.Pod { p := basicPod("a"); p.Spec.PriorityClassName = SystemNodeCritical; return p },
			wantValue: 2000001000, wantClass: SystemNodeCritical, wantPolicy: corev1.PreemptLowerPriority},
		{name: "global default with Never", classes: []*schedulingv1.PriorityClass{
			{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 10, GlobalDefault: true, PreemptionPolicy: &never},
			{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 100, GlobalDefault: true},
		}, pod: func() *corev1.Pod { return basicPod("a") }, wantValue: 10, wantClass: "low", wantPolicy: corev1.PreemptNever},
		{name: "explicit priority that disagrees", pod: func() *corev1.Pod {
			p := basicPod("p")
			v := int32(7)
			p.Spec.Priority = &v
			return p
		}, wantErr: `pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newState(t)
			for i, pc := range c.classes {
				if i > 0 && pc.GlobalDefault {
					// A second default only arises from racing creates
					// (admission refuses it); store it past admission.
					s.PriorityClasses[pc.Name] = pc
					continue
				}
				if err := Create(s, pc); err != nil {
					t.Fatal(err)
				}
			}
			pod := c.pod()
			err := CreatePod(s, pod)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				if len(s.Pods) != 0 {
					t.Fatal("a refused pod was stored")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *pod.Spec.Priority != c.wantValue || pod.Spec.PriorityClassName != c.wantClass || *pod.Spec.PreemptionPolicy != c.wantPolicy {
				t.Fatalf("priority %d class %q policy %s", *pod.Spec.Priority, pod.Spec.PriorityClassName, *pod.Spec.PreemptionPolicy)
			}
		})
	}
}

func TestCreatePod(t *testing.T) {
	s := newState(t)
	pod := basicPod("")
	pod.GenerateName = "web-"
	pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: mustQ("1"), corev1.ResourceMemory: mustQ("1Gi")}
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
	if err := CreatePod(s, pod); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pod.Name, "web-") || len(pod.Name) != len("web-")+5 {
		t.Errorf("generated name %q", pod.Name)
	}
	if s.Pods["default/"+pod.Name] != pod || pod.UID == "" || pod.ResourceVersion == "" || pod.Kind != "Pod" || pod.APIVersion != "v1" {
		t.Errorf("pod not stored with server metadata: %+v", pod.ObjectMeta)
	}
	if pod.Status.Phase != corev1.PodPending || pod.Status.QOSClass != corev1.PodQOSGuaranteed {
		t.Errorf("status %+v", pod.Status)
	}
	c := pod.Spec.Containers[0]
	if c.ImagePullPolicy != corev1.PullAlways || c.TerminationMessagePath != "/dev/termination-log" || c.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("container defaults %+v", c)
	}
	if !c.Resources.Requests.Cpu().Equal(mustQ("1")) {
		t.Errorf("requests not defaulted from limits: %v", c.Resources.Requests)
	}
	if pod.Spec.SchedulerName != corev1.DefaultSchedulerName || pod.Spec.ServiceAccountName != "default" || *pod.Spec.TerminationGracePeriodSeconds != 30 ||
		pod.Spec.DNSPolicy != corev1.DNSClusterFirst || pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || !*pod.Spec.EnableServiceLinks {
		t.Errorf("pod spec defaults %+v", pod.Spec)
	}
	if len(pod.Spec.Volumes) != 1 || !strings.HasPrefix(pod.Spec.Volumes[0].Name, "kube-api-access-") ||
		c.VolumeMounts[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" {
		t.Errorf("service account token not mounted: %+v", pod.Spec.Volumes)
	}
	if len(pod.Spec.Tolerations) != 2 {
		t.Errorf("default tolerations missing: %v", pod.Spec.Tolerations)
	}

	dup := basicPod(pod.Name)
	if err := CreatePod(s, dup); err == nil || err.Error() != `pods "`+pod.Name+`" already exists` {
		t.Errorf("duplicate: %v", err)
	}
	missing := basicPod("a")
	missing.Namespace = "nope"
	if err := CreatePod(s, missing); err == nil || err.Error() != `namespaces "nope" not found` {
		t.Errorf("missing namespace: %v", err)
	}
	s.Namespaces["kube-public"].Status.Phase = corev1.NamespaceTerminating
	gone := basicPod("t")
	gone.Namespace = "kube-public"
	if err := CreatePod(s, gone); err == nil ||
		err.Error() != `pods "t" is forbidden: unable to create new content in namespace kube-public because it is being terminated` {
		t.Errorf("terminating namespace: %v", err)
	}
	noSA := basicPod("b")
	noSA.Spec.ServiceAccountName = "ui"
	if err := CreatePod(s, noSA); err == nil ||
		err.Error() != `pods "b" is forbidden: error looking up service account default/ui: serviceaccount "ui" not found` {
		t.Errorf("missing service account: %v", err)
	}
}

func TestPullPolicyDefault(t *testing.T) {
	cases := map[string]corev1.PullPolicy{
		"nginx":                        corev1.PullAlways,
		"nginx:latest":                 corev1.PullAlways,
		"nginx:1.27":                   corev1.PullIfNotPresent,
		"localhost:5000/app":           corev1.PullAlways,
		"localhost:5000/app:v1":        corev1.PullIfNotPresent,
		"public.ecr.aws/x/ui@sha256:0": corev1.PullIfNotPresent,
	}
	for image, want := range cases {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("%s: got %s, want %s", image, got, want)
		}
	}
}

func TestBootstrapAndNamespaces(t *testing.T) {
	s := newState(t)
	for _, ns := range InitialNamespaces {
		if s.Namespaces[ns] == nil || s.ServiceAccounts[ns+"/default"] == nil {
			t.Errorf("namespace %s or its default service account missing", ns)
		}
		if s.Namespaces[ns].Labels[corev1.LabelMetadataName] != ns || s.Namespaces[ns].Status.Phase != corev1.NamespaceActive {
			t.Errorf("namespace %s not defaulted", ns)
		}
	}
	if s.PriorityClasses[SystemClusterCritical].Value != 2000000000 || s.PriorityClasses[SystemNodeCritical].Value != 2000001000 {
		t.Error("built-in priority classes missing")
	}
	if s.Services["default/kubernetes"].Spec.ClusterIP != "10.100.0.1" {
		t.Errorf("kubernetes service IP %s", s.Services["default/kubernetes"].Spec.ClusterIP)
	}
	if err := CreateNamespace(s, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ui"}}); err != nil {
		t.Fatal(err)
	}
	if s.ServiceAccounts["ui/default"] == nil {
		t.Error("new namespace has no default service account")
	}
}

func TestUpdateDeployment(t *testing.T) {
	s := newState(t)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ui"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ui"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ui", Image: "ui:1"}}}},
		},
	}
	if err := Create(s, d.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	stored := s.Deployments["default/ui"]
	if stored.Generation != 1 || *stored.Spec.Replicas != 1 || stored.Spec.Strategy.RollingUpdate.MaxSurge.StrVal != "25%" ||
		*stored.Spec.RevisionHistoryLimit != 10 || *stored.Spec.ProgressDeadlineSeconds != 600 {
		t.Fatalf("deployment defaults: %+v", stored.Spec)
	}
	uid, rv := stored.UID, stored.ResourceVersion

	changed, err := Update(s, d.DeepCopy())
	if err != nil || changed || s.Deployments["default/ui"].ResourceVersion != rv {
		t.Fatalf("identical update: changed=%v err=%v", changed, err)
	}
	labelOnly := d.DeepCopy()
	labelOnly.Labels = map[string]string{"team": "a"}
	if changed, _ := Update(s, labelOnly); !changed || s.Deployments["default/ui"].Generation != 1 {
		t.Fatalf("metadata change must not bump generation")
	}
	spec := labelOnly.DeepCopy()
	spec.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/arch": "arm64"}
	if changed, _ := Update(s, spec); !changed {
		t.Fatal("spec change not reported")
	}
	got := s.Deployments["default/ui"]
	if got.Generation != 2 || got.UID != uid || got.ResourceVersion == rv {
		t.Fatalf("after spec update: generation %d uid %s rv %s", got.Generation, got.UID, got.ResourceVersion)
	}
	if _, err := Update(s, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "nope", Namespace: "default"}}); err == nil ||
		err.Error() != `deployments.apps "nope" not found` {
		t.Fatalf("missing: %v", err)
	}
}

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

func TestSecondGlobalDefaultPriorityClass(t *testing.T) {
	s := newState(t)
	low := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 10, GlobalDefault: true}
	if err := Create(s, low); err != nil {
		t.Fatal(err)
	}
	// Re-applying the default itself is fine.
	if _, err := Update(s, low.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	want := `priorityclasses.scheduling.k8s.io "high" is forbidden: PriorityClass low is already marked as default. Only one default can exist`
	high := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 100, GlobalDefault: true}
	if err := Create(s, high); err == nil || err.Error() != want {
		t.Fatalf("create: err = %v, want %q", err, want)
	}
	plain := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 100}
	if err := Create(s, plain); err != nil {
		t.Fatal(err)
	}
	marked := plain.DeepCopy()
	marked.GlobalDefault = true
	if _, err := Update(s, marked); err == nil || err.Error() != want {
		t.Fatalf("update: err = %v, want %q", err, want)
	}
}

// The API server merges stringData into data, stringData winning, on create
// and update, and stores no stringData.
func TestSecretStringDataMergesIntoData(t *testing.T) {
	s := newState(t)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Data:       map[string][]byte{"username": []byte("old"), "host": []byte("db")},
		StringData: map[string]string{"username": "admin", "password": "pw"},
	}
	if err := Create(s, secret); err != nil {
		t.Fatal(err)
	}
	got := s.Secrets["default/db"]
	if got.StringData != nil || string(got.Data["username"]) != "admin" || string(got.Data["password"]) != "pw" ||
		string(got.Data["host"]) != "db" || got.Type != corev1.SecretTypeOpaque {
		t.Errorf("stored secret: type %q data %q stringData %v", got.Type, got.Data, got.StringData)
	}
	update := got.DeepCopy()
	update.StringData = map[string]string{"password": "new"}
	if _, err := Update(s, update); err != nil {
		t.Fatal(err)
	}
	if got := s.Secrets["default/db"]; got.StringData != nil || string(got.Data["password"]) != "new" {
		t.Errorf("updated secret: data %q stringData %v", got.Data, got.StringData)
	}
}
