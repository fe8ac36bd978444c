package volumezone

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestVolumeZone(t *testing.T) {
	wffc, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	classes := []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "late"}, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "now"}, VolumeBindingMode: &imm},
		{ObjectMeta: metav1.ObjectMeta{Name: "unset"}},
	}
	claim := func(name, class, volume string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: volume}}
	}
	pvs := []*v1.PersistentVolume{
		{ObjectMeta: metav1.ObjectMeta{Name: "pv-a", Labels: map[string]string{v1.LabelTopologyZone: "za"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "pv-beta", Labels: map[string]string{v1.LabelFailureDomainBetaZone: "za__zb"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "pv-none"}},
	}
	pvcs := []*v1.PersistentVolumeClaim{claim("a", "", "pv-a"), claim("beta", "", "pv-beta"), claim("none", "", "pv-none"),
		claim("late", "late", ""), claim("now", "now", ""), claim("unset", "unset", ""), claim("lost", "", "pv-gone")}
	nodes := []*v1.Node{
		plugintest.Node("a", map[string]string{v1.LabelTopologyZone: "za"}),
		plugintest.Node("b", map[string]string{v1.LabelTopologyZone: "zb"}),
		plugintest.Node("c", map[string]string{v1.LabelTopologyZone: "zc"}),
		plugintest.Node("nolabel", nil),
	}
	uu := framework.UnschedulableAndUnresolvable
	conflict := plugintest.Verdict{Code: uu, Reason: ErrReasonConflict}
	tests := []struct {
		claim   string
		wantPre plugintest.Verdict
		want    map[string]plugintest.Verdict
	}{
		{claim: "a", want: map[string]plugintest.Verdict{"a": {}, "b": conflict, "c": conflict, "nolabel": {}}},
		{claim: "beta", want: map[string]plugintest.Verdict{"a": {}, "b": {}, "c": conflict, "nolabel": {}}},
		{claim: "none", wantPre: plugintest.Verdict{Code: framework.Skip}},
		{claim: "late", wantPre: plugintest.Verdict{Code: framework.Skip}},
		{claim: "now", wantPre: plugintest.Verdict{Code: uu, Reason: "PersistentVolume had no name"}},
		{claim: "unset", wantPre: plugintest.Verdict{Code: uu, Reason: `VolumeBindingMode not set for StorageClass "unset"`}},
		{claim: "lost", wantPre: plugintest.Verdict{Code: uu, Reason: `persistentvolume "pv-gone" not found`}},
		{claim: "missing", wantPre: plugintest.Verdict{Code: uu, Reason: `persistentvolumeclaim "missing" not found`}},
	}
	for _, tt := range tests {
		t.Run(tt.claim, func(t *testing.T) {
			h := plugintest.NewHandle(nodes, nil)
			h.PVCs, h.PVs, h.StorageClasses = pvcs, pvs, classes
			pod := plugintest.Pod("default", "p", "", nil)
			pod.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: tt.claim}}}}
			pre, got := plugintest.RunFilter(New(h).(*VolumeZone), h, pod)
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
