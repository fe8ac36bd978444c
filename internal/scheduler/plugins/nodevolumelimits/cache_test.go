package nodevolumelimits

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// epochHandle is a storage view with an epoch that logs claim writes, as
// the scheduler's handle does within a Sync.
type epochHandle struct {
	*plugintest.Handle
	epoch  uint64
	writes []framework.StorageWrite
}

func (h *epochHandle) StorageEpoch() (uint64, []framework.StorageWrite) { return h.epoch, h.writes }

func (h *epochHandle) UpdatePersistentVolumeClaim(pvc *v1.PersistentVolumeClaim) error {
	h.writes = append(h.writes, framework.StorageWrite{Namespace: pvc.Namespace, Name: pvc.Name})
	return h.Handle.UpdatePersistentVolumeClaim(pvc)
}

// TestCachedVolumesFollowWrites: the cached plugin agrees with an uncached
// one as claims of the incoming and of the assigned pod are rewritten, and
// after a new epoch.
func TestCachedVolumesFollowWrites(t *testing.T) {
	gp3, limit := "gp3", int32(1)
	claim := func(name, volume string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &gp3, VolumeName: volume}}
	}
	var pvs []*v1.PersistentVolume
	for _, name := range []string{"pv-a", "pv-b", "pv-c"} {
		pvs = append(pvs, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PersistentVolumeSpec{
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-" + name}}}})
	}
	h := &epochHandle{Handle: plugintest.NewHandle([]*v1.Node{plugintest.Node("n1", nil)}, []*v1.Pod{podWith("e", "n1", "c0")}), epoch: 1}
	h.PVCs = []*v1.PersistentVolumeClaim{claim("c0", "pv-a"), claim("c1", "pv-b")}
	h.PVs = pvs
	h.CSINodes = []*storagev1.CSINode{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: "ebs.csi.aws.com", Allocatable: &storagev1.VolumeNodeResources{Count: &limit}}}}}}
	cached, plain := New(h).(*CSILimits), New(h.Handle).(*CSILimits)
	if cached.cache == nil || plain.cache != nil {
		t.Fatal("only the epoch handle should enable the cache")
	}
	pi := framework.NewPodInfo(podWith("p", "", "c1"), true)
	ni := h.Node("n1")
	exceeded := plugintest.Verdict{Code: framework.Unschedulable, Reason: ErrReasonMaxVolumeCountExceeded}
	steps := []struct {
		name   string
		change func()
		want   plugintest.Verdict
	}{
		{name: "distinct volumes exceed the limit", change: func() {}, want: exceeded},
		{name: "incoming claim rebound to the attached volume", change: func() { _ = h.UpdatePersistentVolumeClaim(claim("c1", "pv-a")) }},
		{name: "assigned pod's claim rebound elsewhere", change: func() { _ = h.UpdatePersistentVolumeClaim(claim("c0", "pv-c")) }, want: exceeded},
		{name: "new epoch after an in-place change", change: func() {
			h.Handle.PersistentVolumeClaim("default", "c0").Spec.VolumeName = "pv-a"
			h.epoch++
		}},
	}
	for _, step := range steps {
		step.change()
		for i := 0; i < 2; i++ { // the second round is served from the cache
			got := plugintest.VerdictOf(cached.Filter(framework.NewCycleState(), pi, ni))
			if ref := plugintest.VerdictOf(plain.Filter(framework.NewCycleState(), pi, ni)); got != ref || got != step.want {
				t.Fatalf("%s (round %d): got %+v, uncached %+v, want %+v", step.name, i, got, ref, step.want)
			}
		}
	}
}
