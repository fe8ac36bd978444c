package volumerestrictions

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func withClaim(p *v1.Pod, name string) *v1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: name, VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
	return p
}

func withEBS(p *v1.Pod, id string) *v1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "ebs", VolumeSource: v1.VolumeSource{
		AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id}}})
	return p
}

func claim(name string, mode v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{mode}}}
}

func TestVolumeRestrictions(t *testing.T) {
	pod := func() *v1.Pod { return plugintest.Pod("default", "p", "", nil) }
	claims := []*v1.PersistentVolumeClaim{claim("rwo", v1.ReadWriteOnce), claim("rwop", v1.ReadWriteOncePod)}
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing []*v1.Pod
		wantPre  plugintest.Verdict
		want     map[string]plugintest.Verdict
	}{
		{name: "no volumes", pod: pod(), wantPre: plugintest.Verdict{Code: framework.Skip}},
		{name: "plain claim", pod: withClaim(pod(), "rwo"), wantPre: plugintest.Verdict{Code: framework.Skip}},
		{name: "missing claim", pod: withClaim(pod(), "data"),
			wantPre: plugintest.Verdict{Code: framework.UnschedulableAndUnresolvable, Reason: `persistentvolumeclaim "data" not found`}},
		{name: "RWOP unused", pod: withClaim(pod(), "rwop"), wantPre: plugintest.Verdict{Code: framework.Skip}},
		{name: "RWOP in use on another node", pod: withClaim(pod(), "rwop"),
			existing: []*v1.Pod{withClaim(plugintest.Pod("default", "e", "n2", nil), "rwop")},
			want: map[string]plugintest.Verdict{
				"n1": {Code: framework.Unschedulable, Reason: ErrReasonReadWriteOncePodConflict},
				"n2": {Code: framework.Unschedulable, Reason: ErrReasonReadWriteOncePodConflict}}},
		{name: "same EBS volume", pod: withEBS(pod(), "vol-1"),
			existing: []*v1.Pod{withEBS(plugintest.Pod("default", "e", "n1", nil), "vol-1")},
			want:     map[string]plugintest.Verdict{"n1": {Code: framework.Unschedulable, Reason: ErrReasonDiskConflict}, "n2": {}}},
		{name: "other EBS volume", pod: withEBS(pod(), "vol-2"),
			existing: []*v1.Pod{withEBS(plugintest.Pod("default", "e", "n1", nil), "vol-1")},
			want:     map[string]plugintest.Verdict{"n1": {}, "n2": {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.NewHandle([]*v1.Node{plugintest.Node("n1", nil), plugintest.Node("n2", nil)}, tt.existing)
			h.PVCs = claims
			pre, got := plugintest.RunFilter(New(h).(*VolumeRestrictions), h, tt.pod)
			if v := plugintest.VerdictOf(pre); v != tt.wantPre {
				t.Fatalf("PreFilter %+v, want %+v", v, tt.wantPre)
			}
			for n, want := range tt.want {
				if got[n] != want {
					t.Errorf("%s: %+v, want %+v", n, got[n], want)
				}
			}
		})
	}
}

// Preemption removing the pod that holds the RWOP claim clears the conflict.
func TestRemovePodClearsConflict(t *testing.T) {
	holder := withClaim(plugintest.Pod("default", "e", "n1", nil), "rwop")
	h := plugintest.NewHandle([]*v1.Node{plugintest.Node("n1", nil)}, []*v1.Pod{holder})
	h.PVCs = []*v1.PersistentVolumeClaim{claim("rwop", v1.ReadWriteOncePod)}
	pl := New(h).(*VolumeRestrictions)
	cs := framework.NewCycleState()
	pi := framework.NewPodInfo(withClaim(plugintest.Pod("default", "p", "", nil), "rwop"), true)
	if _, st := pl.PreFilter(cs, pi, h.Nodes()); !st.IsSuccess() {
		t.Fatalf("PreFilter %v", st.Message())
	}
	if st := pl.Filter(cs, pi, h.Node("n1")); st.Code() != framework.Unschedulable {
		t.Fatalf("want a conflict, got %v", st.Message())
	}
	clone := cs.Clone()
	if st := pl.RemovePod(clone, pi, framework.NewPodInfo(holder, true), h.Node("n1")); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if st := pl.Filter(clone, pi, h.Node("n1")); !st.IsSuccess() {
		t.Fatalf("conflict left after removing the holder: %v", st.Message())
	}
	if st := pl.Filter(cs, pi, h.Node("n1")); st.IsSuccess() {
		t.Fatal("the clone's change leaked into the original state")
	}
}
