package kubelet

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/sim"
)

// meddler stands for the other controllers: it writes once per instant, so
// the kubelet runs a second round at every instant and meets the pods
// that wait (what the remembered waits skip), and at chosen instants it
// changes what a wait is computed from.
type meddler struct {
	last  time.Time
	start time.Time
}

func (m *meddler) Name() string { return "meddler" }

func (m *meddler) Sync(s *cluster.State) (bool, error) {
	if m.last.Equal(s.Now) {
		return false, nil
	}
	m.last = s.Now
	switch s.Now.Sub(m.start) {
	case time.Second:
		// A pod waiting for its pull is told not to pull.
		p := s.Pods["default/w-0-0"]
		p.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
		p.ResourceVersion = s.Bump()
	case 2 * time.Second:
		// A node comes to hold an image: its pods skip the pull.
		n := s.Nodes["n2"]
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: []string{"docker.io/library/nginx:1.27"}})
		n.ResourceVersion = s.Bump()
	case 4 * time.Second:
		// A node stops reporting while its pods wait.
		n := s.Nodes["n3"]
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeReady {
				n.Status.Conditions[i].Status = corev1.ConditionUnknown
			}
		}
		n.ResourceVersion = s.Bump()
	default:
		s.Bump()
	}
	return true, nil
}

// waitScenario starts pods of every kind of wait — sandbox, pull, a
// node's own container start, readiness delays, claims — on several nodes
// over a few seconds, with a meddler changing things under them, and
// returns what the run wrote: pods, events and timers as JSON.
func waitScenario(t *testing.T) string {
	t.Helper()
	old := NodeTiming
	t.Cleanup(func() { NodeTiming = old })
	NodeTiming = func(n *corev1.Node) (Timing, bool) {
		if n.Labels["timing"] == "slow" {
			return Timing{Sandbox: 3 * time.Second, Pull: 5 * time.Second, Start: 2 * time.Second}, true
		}
		return Timing{}, false
	}
	s := controllertest.NewState()
	start := s.Now
	for i := range 4 {
		labels := map[string]string{}
		if i == 1 {
			labels["timing"] = "slow"
		}
		controllertest.AddNode(s, fmt.Sprintf("n%d", i), "64", "256Gi", labels)
	}
	ctrls := []sim.Controller{New(), &meddler{start: start}}
	for round := range 3 {
		for i := range 12 {
			boundPod(s, fmt.Sprintf("w-%d-%d", round, i), fmt.Sprintf("n%d", i%4), "10m", func(p *corev1.Pod) {
				switch i % 6 {
				case 1:
					p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{InitialDelaySeconds: int32(3 + i),
						ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
				case 2:
					p.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
				case 3:
					p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "missing"}}}}
				case 4:
					p.Spec.HostNetwork = true
				}
			})
		}
		if err := sim.Advance(s, ctrls, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := sim.Settle(s, ctrls, time.Hour); err != nil {
		t.Fatal(err)
	}
	var pods []*corev1.Pod
	for _, k := range cluster.SortedKeys(s.Pods) {
		pods = append(pods, s.Pods[k])
	}
	out, err := json.Marshal(struct {
		Pods   []*corev1.Pod
		Events []*corev1.Event
		Timers []cluster.Timer
		RV     int64
	}{pods, s.Events, s.Timers, s.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The remembered waits change nothing: the same pods, events, timers and
// resource versions as syncs that visit every waiting pod.
func TestRememberedWaitsMatchVisits(t *testing.T) {
	with := waitScenario(t)
	rememberWaits = false
	t.Cleanup(func() { rememberWaits = true })
	without := waitScenario(t)
	if with != without {
		t.Fatalf("remembered waits changed the run:\nwith:    %s\nwithout: %s", with, without)
	}
	if len(with) < 1000 {
		t.Fatalf("scenario wrote too little: %s", with)
	}
}

// A remembered wait holds only while the pod, its node and the clock are
// as they were.
func TestWaitStill(t *testing.T) {
	s := controllertest.NewState()
	n := controllertest.AddNode(s, "n1", "4", "8Gi", nil)
	p := boundPod(s, "a", "n1", "10m")
	claimed := boundPod(s, "b", "n1", "10m", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}}
	})
	at := s.Now.Add(time.Second)
	cases := []struct {
		name   string
		change func()
		still  bool
	}{
		{"unchanged", func() {}, true},
		{"pod written", func() { p.ResourceVersion = s.Bump() }, false},
		{"node written", func() { n.ResourceVersion = s.Bump() }, false},
		{"node replaced", func() { c := n.DeepCopy(); s.Nodes["n1"] = c }, false},
		{"instant reached", func() { s.Now = at }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			saved := *s
			defer func() { s.Now, s.Nodes["n1"] = saved.Now, n }()
			var w waits
			w.begin(s)
			w.note(p, n, at, 42)
			w.note(claimed, n, at, 43)
			if _, _, known := w.check(s, claimed); known {
				t.Fatal("a pod with claims is remembered")
			}
			w.end()
			tc.change()
			w.begin(s)    // the next sync
			for range 2 { // an ended wait is not taken for one on a later pass either
				waiting, rev, known := w.check(s, p)
				if waiting != tc.still || !known || rev != 42 {
					t.Fatalf("check = %v, %d, %v; want %v, 42, true", waiting, rev, known, tc.still)
				}
			}
			w.end()
			if tc.still != (w.pods != nil) {
				t.Fatalf("waits kept: %v, want %v (a pod waits: %v)", w.pods != nil, tc.still, tc.still)
			}
			w.begin(s)
			w.note(p, n, time.Time{}, 42)
			if _, _, known := w.check(s, p); known {
				t.Fatal("a visit without a wait leaves the old one")
			}
		})
	}
}

// The sort keys read once order as time.Time.Compare, the create revision
// and the key do.
func TestSortForKubeletMatchesPlain(t *testing.T) {
	s := controllertest.NewState()
	base := s.Now
	var pods []*corev1.Pod
	for i := range 200 {
		p := boundPod(s, fmt.Sprintf("p%03d", i), "n1", "10m")
		// Whole seconds, sub-second parts, equal times and times before
		// 1970 (negative Unix seconds).
		off := time.Duration((i*7919)%13) * 500 * time.Millisecond
		if i%5 == 0 {
			off = -time.Duration(i) * 24 * 365 * time.Hour * 10
		}
		p.CreationTimestamp.Time = base.Add(off)
		if i%3 == 0 {
			s.CreateRevisions[p.UID] = 7 // ties broken by key
		}
		pods = append(pods, p)
	}
	got := append([]*corev1.Pod(nil), pods...)
	sortForKubelet(s, got)
	want := append([]*corev1.Pod(nil), pods...)
	plainSort(s, want)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("sortForKubelet differs from the plain comparison")
	}
}

// plainSort is sortForKubelet's order written out directly.
func plainSort(s *cluster.State, pods []*corev1.Pod) {
	less := func(a, b *corev1.Pod) bool {
		if c := a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time); c != 0 {
			return c < 0
		}
		ra, rb := s.CreateRevisions[a.UID], s.CreateRevisions[b.UID]
		if ra != rb {
			return ra < rb
		}
		return cluster.Key(a.Namespace, a.Name) < cluster.Key(b.Namespace, b.Name)
	}
	for i := 1; i < len(pods); i++ {
		for j := i; j > 0 && less(pods[j], pods[j-1]); j-- {
			pods[j], pods[j-1] = pods[j-1], pods[j]
		}
	}
}
