package nodevolumelimits

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func podWith(name, node string, claims ...string) *v1.Pod {
	p := plugintest.Pod("default", name, node, nil)
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func TestNodeVolumeLimits(t *testing.T) {
	gp2, gp3 := "gp2", "gp3"
	limit := func(node string, n int32) *storagev1.CSINode {
		return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
			{Name: "ebs.csi.aws.com", Allocatable: &storagev1.VolumeNodeResources{Count: &n}}}}}
	}
	var pvcs []*v1.PersistentVolumeClaim
	var pvs []*v1.PersistentVolume
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("c%d", i)
		pvcs = append(pvcs, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &gp3, VolumeName: "pv-" + name}})
		pvs = append(pvs, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + name}, Spec: v1.PersistentVolumeSpec{
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-" + name}}}})
	}
	// An in-tree gp2 volume counts against the EBS CSI limit (migration).
	pvcs = append(pvcs, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "intree"},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &gp2, VolumeName: "pv-intree"}},
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "unbound"}, Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &gp2}})
	pvs = append(pvs, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-intree"}, Spec: v1.PersistentVolumeSpec{
		PersistentVolumeSource: v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://za/vol-9"}}}})
	classes := []*storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "gp2"}, Provisioner: "kubernetes.io/aws-ebs"}}
	exceeded := plugintest.Verdict{Code: framework.Unschedulable, Reason: ErrReasonMaxVolumeCountExceeded}
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing []*v1.Pod
		csiNodes []*storagev1.CSINode
		wantSkip bool
		want     plugintest.Verdict
	}{
		{name: "no claims", pod: podWith("p", ""), wantSkip: true},
		{name: "under the limit", pod: podWith("p", "", "c1"), existing: []*v1.Pod{podWith("e", "n1", "c0")}, csiNodes: []*storagev1.CSINode{limit("n1", 2)}},
		{name: "at the limit", pod: podWith("p", "", "c2"), existing: []*v1.Pod{podWith("e", "n1", "c0", "c1")}, csiNodes: []*storagev1.CSINode{limit("n1", 2)}, want: exceeded},
		{name: "shared volume counts once", pod: podWith("p", "", "c1"), existing: []*v1.Pod{podWith("e", "n1", "c0", "c1")}, csiNodes: []*storagev1.CSINode{limit("n1", 2)}},
		{name: "no CSINode, no limit", pod: podWith("p", "", "c2"), existing: []*v1.Pod{podWith("e", "n1", "c0", "c1")}},
		{name: "migrated in-tree volume counts", pod: podWith("p", "", "c2"), existing: []*v1.Pod{podWith("e", "n1", "c0", "intree")}, csiNodes: []*storagev1.CSINode{limit("n1", 2)}, want: exceeded},
		{name: "unbound gp2 claim counts", pod: podWith("p", "", "unbound"), existing: []*v1.Pod{podWith("e", "n1", "c0")}, csiNodes: []*storagev1.CSINode{limit("n1", 1)}, want: exceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.NewHandle([]*v1.Node{plugintest.Node("n1", nil)}, tt.existing)
			h.PVCs, h.PVs, h.StorageClasses, h.CSINodes = pvcs, pvs, classes, tt.csiNodes
			pre, got := plugintest.RunFilter(New(h).(*CSILimits), h, tt.pod)
			if pre.IsSkip() != tt.wantSkip {
				t.Fatalf("skip %v, want %v", pre.IsSkip(), tt.wantSkip)
			}
			if !tt.wantSkip && got["n1"] != tt.want {
				t.Errorf("got %+v, want %+v", got["n1"], tt.want)
			}
		})
	}
}
