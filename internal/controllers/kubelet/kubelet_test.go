package kubelet

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	"github.com/berth-sim/berth/internal/sim"
	"github.com/berth-sim/berth/internal/version"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func boundPod(s *cluster.State, name, node, cpu string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
	}
	for _, m := range mutate {
		m(p)
	}
	if err := admission.CreatePod(s, p); err != nil {
		panic(err)
	}
	return p
}

func TestAdmission(t *testing.T) {
	cases := []struct {
		name        string
		pods        []*corev1.Pod // created in order; the last one is checked
		build       func(s *cluster.State) *corev1.Pod
		wantReason  string
		wantMessage string
	}{
		{name: "fits", build: func(s *cluster.State) *corev1.Pod { return boundPod(s, "a", "n1", "500m") }},
		{name: "OutOfcpu counts admitted pods", build: func(s *cluster.State) *corev1.Pod {
			boundPod(s, "a", "n1", "1500m")
			sim.RunNow(s, []sim.Controller{New()})
			return boundPod(s, "b", "n1", "1")
		}, wantReason: "OutOfcpu", wantMessage: "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000"},
		{name: "node selector", build: func(s *cluster.State) *corev1.Pod {
			return boundPod(s, "a", "n1", "100m", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"kubernetes.io/arch": "arm64"} })
		}, wantReason: "NodeAffinity", wantMessage: "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
		{name: "host port", build: func(s *cluster.State) *corev1.Pod {
			port := func(p *corev1.Pod) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
			}
			boundPod(s, "a", "n1", "100m", port)
			sim.RunNow(s, []sim.Controller{New()})
			return boundPod(s, "b", "n1", "100m", port)
		}, wantReason: "NodePorts", wantMessage: "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := controllertest.NewState()
			controllertest.AddNode(s, "n1", "2", "4Gi", nil)
			pod := c.build(s)
			if err := sim.RunNow(s, []sim.Controller{New()}); err != nil {
				t.Fatal(err)
			}
			if c.wantReason == "" {
				if pod.Status.Phase != corev1.PodPending || pod.Status.StartTime == nil {
					t.Fatalf("pod not admitted: %+v", pod.Status)
				}
				return
			}
			if pod.Status.Phase != corev1.PodFailed || pod.Status.Reason != c.wantReason || pod.Status.Message != c.wantMessage {
				t.Fatalf("status %s %s %q", pod.Status.Phase, pod.Status.Reason, pod.Status.Message)
			}
			ev := s.EventsFor("Pod", "default", pod.Name)
			if len(ev) != 1 || ev[0].Type != corev1.EventTypeWarning || ev[0].Reason != c.wantReason || "Pod was rejected: "+ev[0].Message != c.wantMessage {
				t.Fatalf("events %+v", ev)
			}
		})
	}
}

func TestStartupTimeline(t *testing.T) {
	s := controllertest.NewState()
	controllertest.AddNode(s, "n1", "2", "4Gi", nil)
	pod := boundPod(s, "a", "n1", "100m", func(p *corev1.Pod) {
		p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{InitialDelaySeconds: 5}
	})
	ctrls := []sim.Controller{New()}
	if err := sim.RunNow(s, ctrls); err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodPending || !pod.Status.StartTime.Time.Equal(cluster.Epoch) || pod.Status.HostIP != "10.42.0.10" || pod.Status.PodIP != "" {
		t.Fatalf("after admission: %+v", pod.Status)
	}
	if err := sim.Settle(s, ctrls, time.Hour); err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) time.Time { return cluster.Epoch.Add(d) }
	conds := map[corev1.PodConditionType]time.Time{
		corev1.PodReadyToStartContainers: at(SandboxDelay),
		corev1.PodInitialized:            at(0),
		corev1.PodReady:                  at(SandboxDelay + ImagePullDelay + 5*time.Second),
		corev1.ContainersReady:           at(SandboxDelay + ImagePullDelay + 5*time.Second),
		corev1.PodScheduled:              at(0),
	}
	if len(pod.Status.Conditions) != len(conds) || pod.Status.Conditions[0].Type != corev1.PodReadyToStartContainers {
		t.Fatalf("conditions %+v", pod.Status.Conditions)
	}
	for typ, want := range conds {
		c := controllerutil.GetPodCondition(&pod.Status, typ)
		if c == nil || c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Time.Equal(want) {
			t.Errorf("%s = %+v, want True at %v", typ, c, want)
		}
	}
	cs := pod.Status.ContainerStatuses[0]
	if pod.Status.Phase != corev1.PodRunning || !cs.Ready || cs.State.Running == nil ||
		!cs.State.Running.StartedAt.Time.Equal(at(SandboxDelay+ImagePullDelay)) || cs.Image != "docker.io/library/nginx:1.27" {
		t.Fatalf("container status %+v", cs)
	}
	if pod.Status.PodIP == "" {
		t.Fatal("no pod IP")
	}
	var reasons []string
	for _, e := range s.EventsFor("Pod", "default", "a") {
		reasons = append(reasons, e.Reason+": "+e.Message)
	}
	want := []string{
		`Pulling: Pulling image "nginx:1.27"`,
		`Pulled: Successfully pulled image "nginx:1.27" in 2s (2s including waiting). Image size: ` + itoa(imageSize("nginx:1.27")) + ` bytes.`,
		"Created: Created container: app", // default version 1.34
		"Started: Started container app",
	}
	if len(reasons) != len(want) {
		t.Fatalf("events %v", reasons)
	}
	for i := range want {
		if reasons[i] != want[i] {
			t.Errorf("event %d = %q, want %q", i, reasons[i], want[i])
		}
	}
}

func itoa(n int64) string { return resource.NewQuantity(n, resource.DecimalSI).String() }

func TestMissingNodeStaysPending(t *testing.T) {
	s := controllertest.NewState()
	pod := boundPod(s, "a", "ghost", "100m")
	if err := sim.Settle(s, []sim.Controller{New()}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodPending || pod.Status.StartTime != nil {
		t.Fatalf("pod on a missing node changed: %+v", pod.Status)
	}
}

func TestNormalizeImage(t *testing.T) {
	cases := map[string]string{
		"nginx":                           "docker.io/library/nginx:latest",
		"bitnami/redis:7":                 "docker.io/bitnami/redis:7",
		"public.ecr.aws/eks/ui:0.4.0":     "public.ecr.aws/eks/ui:0.4.0",
		"localhost:5000/app":              "localhost:5000/app:latest",
		"registry.k8s.io/pause@sha256:ab": "registry.k8s.io/pause@sha256:ab",
	}
	for in, want := range cases {
		if got := normalizeImage(in); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

func TestContainerMessagesByVersion(t *testing.T) {
	cases := []struct{ version, created, started string }{
		{"1.29", "Created container app", "Started container app"},
		{"1.34", "Created container: app", "Started container app"},
		{"1.35", "Created container", "Started container"},
	}
	for _, c := range cases {
		v, err := version.Parse(c.version)
		if err != nil {
			t.Fatal(err)
		}
		created, started := containerMessages(v, "app")
		if created != c.created || started != c.started {
			t.Errorf("%s: got %q %q", c.version, created, started)
		}
	}
}

func TestNotReadyNodeDoesNotRunPods(t *testing.T) {
	cases := []struct {
		name      string
		ready     *corev1.ConditionStatus // nil: the node has no Ready condition
		wantStart bool
	}{
		{name: "ready", ready: ptrStatus(corev1.ConditionTrue), wantStart: true},
		{name: "no Ready condition", wantStart: true},
		{name: "not ready", ready: ptrStatus(corev1.ConditionFalse)},
		{name: "unknown", ready: ptrStatus(corev1.ConditionUnknown)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := controllertest.NewState()
			node := controllertest.AddNode(s, "n1", "2", "4Gi", nil)
			node.Status.Conditions = nil
			if c.ready != nil {
				node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: *c.ready}}
			}
			pod := boundPod(s, "a", "n1", "100m")
			if err := sim.Settle(s, []sim.Controller{New()}, time.Hour); err != nil {
				t.Fatal(err)
			}
			if started := pod.Status.StartTime != nil; started != c.wantStart {
				t.Fatalf("started = %v, want %v: %+v", started, c.wantStart, pod.Status)
			}
			if c.wantStart && !controllerutil.IsPodReady(pod) {
				t.Fatalf("pod not ready: %+v", pod.Status.Conditions)
			}
		})
	}
}

// A pod whose Ready condition was turned False while its node is not Ready
// is not turned back by the kubelet.
func TestNotReadyNodeKeepsPodNotReady(t *testing.T) {
	s := controllertest.NewState()
	node := controllertest.AddNode(s, "n1", "2", "4Gi", nil)
	pod := boundPod(s, "a", "n1", "100m")
	ctrls := []sim.Controller{New()}
	if err := sim.Settle(s, ctrls, time.Hour); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions[0].Status = corev1.ConditionUnknown
	controllerutil.GetPodCondition(&pod.Status, corev1.PodReady).Status = corev1.ConditionFalse
	rv := pod.ResourceVersion
	if err := sim.Advance(s, ctrls, time.Hour); err != nil {
		t.Fatal(err)
	}
	if controllerutil.IsPodReady(pod) || pod.ResourceVersion != rv {
		t.Fatalf("kubelet touched the pod: rv %s -> %s, %+v", rv, pod.ResourceVersion, pod.Status.Conditions)
	}
}

func ptrStatus(s corev1.ConditionStatus) *corev1.ConditionStatus { return &s }

// A node with its own timing (NodeTiming, as Fargate's): no sandbox delay,
// its pull time, and containers started a while after they were created;
// until then they wait, with their container IDs.
func TestNodeTiming(t *testing.T) {
	old := NodeTiming
	t.Cleanup(func() { NodeTiming = old })
	NodeTiming = func(node *corev1.Node) (Timing, bool) {
		return Timing{Pull: 43 * time.Second, Start: time.Second}, node.Name == "vm"
	}
	s := controllertest.NewState()
	controllertest.AddNode(s, "vm", "2", "4Gi", nil)
	pod := boundPod(s, "a", "vm", "100m")
	ctrls := []sim.Controller{New()}
	if err := sim.Advance(s, ctrls, 43*time.Second); err != nil {
		t.Fatal(err)
	}
	cs := pod.Status.ContainerStatuses[0]
	if pod.Status.Phase != corev1.PodPending || cs.State.Waiting == nil || cs.ContainerID == "" {
		t.Fatalf("at 43s: phase %s, container %+v; want created, not started", pod.Status.Phase, cs)
	}
	if err := sim.Settle(s, ctrls, time.Hour); err != nil {
		t.Fatal(err)
	}
	cs = pod.Status.ContainerStatuses[0]
	if pod.Status.Phase != corev1.PodRunning || cs.State.Running == nil || cs.ContainerID == "" {
		t.Fatalf("container %+v", cs)
	}
	got := map[string]time.Duration{}
	for _, e := range s.EventsFor("Pod", "default", "a") {
		got[e.Reason] = e.FirstTimestamp.Sub(cluster.Epoch)
	}
	want := map[string]time.Duration{"Pulling": 0, "Pulled": 43 * time.Second, "Created": 43 * time.Second, "Started": 44 * time.Second}
	for reason, at := range want {
		if d, ok := got[reason]; !ok || d != at {
			t.Errorf("%s at %v (recorded: %v), want %v", reason, d, ok, at)
		}
	}
	if started := cs.State.Running.StartedAt.Time; !started.Equal(cluster.Epoch.Add(44 * time.Second)) {
		t.Errorf("started at %v, want 44s", started.Sub(cluster.Epoch))
	}
}
