package controller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/autoscaler/config"
	"github.com/berth-sim/berth/internal/cluster"
)

// TestBackoff follows cluster-autoscaler's exponential backoff: a failure
// while backed off keeps the duration, one after it ran out doubles it, up
// to the maximum.
func TestBackoff(t *testing.T) {
	opts := config.Defaults()
	s := cluster.New("", 1)
	start := s.Now
	steps := []struct {
		after time.Duration // since start
		want  time.Duration // the backoff's duration after a failure then
	}{
		{0, 5 * time.Minute},
		{time.Minute, 5 * time.Minute}, // still backed off: no doubling
		{7 * time.Minute, 10 * time.Minute},
		{20 * time.Minute, 20 * time.Minute},
		{45 * time.Minute, 30 * time.Minute}, // capped
		{80 * time.Minute, 30 * time.Minute},
	}
	for _, st := range steps {
		s.Now = start.Add(st.after)
		backoff(s, opts, "asg", ErrorClassOther, ErrorCodeTimeout, "m")
		b := s.Autoscaler.Backoff["asg"]
		if b.Duration != st.want || !b.Until.Equal(s.Now.Add(st.want)) {
			t.Fatalf("after %v: duration %v until %v, want %v", st.after, b.Duration, b.Until, st.want)
		}
		if _, on := backedOff(s, "asg"); !on {
			t.Fatalf("after %v: not backed off", st.after)
		}
	}
	s.Now = s.Now.Add(31 * time.Minute)
	if _, on := backedOff(s, "asg"); on {
		t.Fatal("still backed off after the backoff ran out")
	}
}

func TestPlacementSkipsZonesWithoutCapacity(t *testing.T) {
	s := cluster.New("", 1)
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	aws := s.Karpenter.AWSState()
	for _, tc := range []struct {
		name     string
		counts   map[string]int
		none     []string
		want     string
		wantFail bool
	}{
		{"fewest instances first", map[string]int{"us-west-2a": 1}, nil, "us-west-2b", false},
		{"ties by zone order", nil, nil, "us-west-2a", false},
		{"an unavailable zone is skipped", nil, []string{"us-west-2a"}, "us-west-2b", false},
		{"then the next fewest", map[string]int{"us-west-2a": 0, "us-west-2b": 0, "us-west-2c": 1}, []string{"us-west-2a", "us-west-2b"}, "us-west-2c", false},
		{"no zone left: the launch fails", nil, zones, "us-west-2a", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			aws.NoCapacity = nil
			for _, z := range tc.none {
				aws.NoCapacity = append(aws.NoCapacity, cluster.NoCapacity{InstanceType: "m5.large", Zone: z, CapacityType: "on-demand"})
			}
			counts := map[string]int{}
			for k, v := range tc.counts {
				counts[k] = v
			}
			z, failed := placement(s, zones, counts, "m5.large", "on-demand")
			if z != tc.want || failed != tc.wantFail {
				t.Fatalf("placement = %s, %v; want %s, %v", z, failed, tc.want, tc.wantFail)
			}
		})
	}
}

func TestRegisterScaleUp(t *testing.T) {
	s := cluster.New("", 1)
	t0 := s.Now
	registerScaleUp(s, "g", 2)
	s.Now = t0.Add(time.Minute)
	registerScaleUp(s, "g", 1)
	if r := s.Autoscaler.ScaleUpRequests["g"]; r.Increase != 3 || !r.Time.Equal(s.Now) {
		t.Fatalf("request %+v: a later scale-up adds to it and restarts its clock", r)
	}
	registerScaleUp(s, "g", -1)
	if r := s.Autoscaler.ScaleUpRequests["g"]; r.Increase != 2 || !r.Time.Equal(s.Now) {
		t.Fatalf("request %+v after a failure of one node", r)
	}
	registerScaleUp(s, "g", -2)
	if _, ok := s.Autoscaler.ScaleUpRequests["g"]; ok {
		t.Fatal("a request with nothing left stays")
	}
	registerScaleUp(s, "h", -1)
	if len(s.Autoscaler.ScaleUpRequests) != 0 {
		t.Fatal("a negative delta created a request")
	}
}

func TestOldEnough(t *testing.T) {
	s := cluster.New("", 1)
	pod := func(name string, age time.Duration, annotation string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(s.Now.Add(-age))}}
		if annotation != "" {
			p.Annotations = map[string]string{AnnotationPodScaleUpDelay: annotation}
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		delay time.Duration
		pod   *corev1.Pod
		want  bool
	}{
		{"a pod of age 0 is too young even without a delay", 0, pod("p", 0, ""), false},
		{"older than the delay", 30 * time.Second, pod("p", 31*time.Second, ""), true},
		{"exactly the delay is too young", 30 * time.Second, pod("p", 30*time.Second, ""), false},
		{"a longer annotation wins", 10 * time.Second, pod("p", 20*time.Second, "1m"), false},
		{"a shorter annotation is ignored", time.Minute, pod("p", 40*time.Second, "10s"), false},
		{"a malformed annotation is ignored", 10 * time.Second, pod("p", 20*time.Second, "soon"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := len(oldEnough(s, []*corev1.Pod{tc.pod}, tc.delay)) == 1
			if got != tc.want {
				t.Fatalf("considered = %v, want %v", got, tc.want)
			}
		})
	}
}
