package volumebinding

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func class(name, provisioner string, mode storagev1.VolumeBindingMode, zones ...string) *storagev1.StorageClass {
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if len(zones) > 0 {
		c.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: v1.LabelTopologyZone, Values: zones}}}}
	}
	return c
}

func claim(name, className, size, volume string) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &className, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}}, VolumeName: volume}}
	if volume != "" {
		c.Annotations = map[string]string{storagehelpers.AnnBindCompleted: "yes"}
		c.Status.Phase = v1.ClaimBound
	}
	return c
}

func volume(name, className, size, zone string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{StorageClassName: className, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable}}
	if zone != "" {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{zone}}}}}}}
	}
	return pv
}

func podWith(claims ...string) *v1.Pod {
	p := plugintest.Pod("default", "p", "", nil)
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func handle(st plugintest.Storage) *plugintest.Handle {
	h := plugintest.NewHandle([]*v1.Node{
		plugintest.Node("a1", map[string]string{v1.LabelTopologyZone: "za"}),
		plugintest.Node("b1", map[string]string{v1.LabelTopologyZone: "zb"}),
	}, nil)
	h.Storage = st
	return h
}

func TestPreFilterAndFilter(t *testing.T) {
	wffc, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	ebsWFFC := class("gp3", EBSCSIDriverName, wffc)
	tests := []struct {
		name      string
		st        plugintest.Storage
		pod       *v1.Pod
		wantPre   plugintest.Verdict
		wantNodes map[string]plugintest.Verdict
	}{
		{name: "no claims", pod: podWith(), wantPre: plugintest.Verdict{Code: framework.Skip}},
		{name: "missing claim", pod: podWith("missing"),
			wantPre: plugintest.Verdict{Code: framework.UnschedulableAndUnresolvable, Reason: `persistentvolumeclaim "missing" not found`}},
		{name: "unbound immediate", pod: podWith("c"),
			st:      plugintest.Storage{StorageClasses: []*storagev1.StorageClass{class("fast", EBSCSIDriverName, imm)}, PVCs: []*v1.PersistentVolumeClaim{claim("c", "fast", "1Gi", "")}},
			wantPre: plugintest.Verdict{Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonUnboundImmediate}},
		{name: "class missing counts as immediate", pod: podWith("c"),
			st:      plugintest.Storage{PVCs: []*v1.PersistentVolumeClaim{claim("c", "nope", "1Gi", "")}},
			wantPre: plugintest.Verdict{Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonUnboundImmediate}},
		{name: "bound PV in one zone", pod: podWith("c"),
			st: plugintest.Storage{PVCs: []*v1.PersistentVolumeClaim{claim("c", "gp3", "1Gi", "pv1")}, PVs: []*v1.PersistentVolume{volume("pv1", "gp3", "1Gi", "zb")}},
			wantNodes: map[string]plugintest.Verdict{
				"a1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonNodeConflict},
				"b1": {}}},
		{name: "bound to missing PV", pod: podWith("c"),
			st: plugintest.Storage{PVCs: []*v1.PersistentVolumeClaim{claim("c", "gp3", "1Gi", "gone")}},
			wantNodes: map[string]plugintest.Verdict{
				"a1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonPVNotExist},
				"b1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonPVNotExist}}},
		{name: "WFFC with a provisioner", pod: podWith("c"),
			st:        plugintest.Storage{StorageClasses: []*storagev1.StorageClass{ebsWFFC}, PVCs: []*v1.PersistentVolumeClaim{claim("c", "gp3", "1Gi", "")}},
			wantNodes: map[string]plugintest.Verdict{"a1": {}, "b1": {}}},
		{name: "WFFC no-provisioner without volumes", pod: podWith("c"),
			st: plugintest.Storage{StorageClasses: []*storagev1.StorageClass{class("local", storagehelpers.NotSupportedProvisioner, wffc)},
				PVCs: []*v1.PersistentVolumeClaim{claim("c", "local", "1Gi", "")}},
			wantNodes: map[string]plugintest.Verdict{
				"a1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonBindConflict},
				"b1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonBindConflict}}},
		{name: "WFFC static volume in one zone", pod: podWith("c"),
			st: plugintest.Storage{StorageClasses: []*storagev1.StorageClass{class("local", storagehelpers.NotSupportedProvisioner, wffc)},
				PVCs: []*v1.PersistentVolumeClaim{claim("c", "local", "1Gi", "")}, PVs: []*v1.PersistentVolume{volume("pv1", "local", "2Gi", "za")}},
			wantNodes: map[string]plugintest.Verdict{
				"a1": {},
				"b1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonBindConflict}}},
		{name: "static volume too small", pod: podWith("c"),
			st: plugintest.Storage{StorageClasses: []*storagev1.StorageClass{class("local", storagehelpers.NotSupportedProvisioner, wffc)},
				PVCs: []*v1.PersistentVolumeClaim{claim("c", "local", "5Gi", "")}, PVs: []*v1.PersistentVolume{volume("pv1", "local", "2Gi", "za")}},
			wantNodes: map[string]plugintest.Verdict{
				"a1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonBindConflict},
				"b1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonBindConflict}}},
		{name: "allowedTopologies", pod: podWith("c"),
			st: plugintest.Storage{StorageClasses: []*storagev1.StorageClass{class("gp3", EBSCSIDriverName, wffc, "zb")},
				PVCs: []*v1.PersistentVolumeClaim{claim("c", "gp3", "1Gi", "")}},
			wantNodes: map[string]plugintest.Verdict{
				"a1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonBindConflict},
				"b1": {}}},
		{name: "selected node elsewhere", pod: podWith("c"),
			st: plugintest.Storage{StorageClasses: []*storagev1.StorageClass{ebsWFFC}, PVCs: []*v1.PersistentVolumeClaim{func() *v1.PersistentVolumeClaim {
				c := claim("c", "gp3", "1Gi", "")
				c.Annotations = map[string]string{storagehelpers.AnnSelectedNode: "b1"}
				return c
			}()}},
			wantNodes: map[string]plugintest.Verdict{
				"a1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonBindConflict},
				"b1": {}}},
		{name: "bound conflict and unbound conflict together", pod: podWith("b", "u"),
			st: plugintest.Storage{StorageClasses: []*storagev1.StorageClass{class("gp3", EBSCSIDriverName, wffc, "zb")},
				PVCs: []*v1.PersistentVolumeClaim{claim("b", "gp3", "1Gi", "pv1"), claim("u", "gp3", "1Gi", "")},
				PVs:  []*v1.PersistentVolume{volume("pv1", "gp3", "1Gi", "zb")}},
			wantNodes: map[string]plugintest.Verdict{
				"a1": {Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonNodeConflict + ", " + ErrReasonBindConflict},
				"b1": {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := handle(tt.st)
			pl := New(h).(*VolumeBinding)
			pre, nodes := plugintest.RunFilter(pl, h, tt.pod)
			if got := plugintest.VerdictOf(pre); got != tt.wantPre {
				t.Fatalf("PreFilter %+v, want %+v", got, tt.wantPre)
			}
			for n, want := range tt.wantNodes {
				if nodes[n] != want {
					t.Errorf("node %s: %+v, want %+v", n, nodes[n], want)
				}
			}
		})
	}
}

// Reserve and PreBind write the claimRef of the chosen static volume, or
// the selected-node annotation of a claim to provision.
func TestReservePreBind(t *testing.T) {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	h := handle(plugintest.Storage{
		StorageClasses: []*storagev1.StorageClass{class("local", "example.com/local", wffc)},
		PVCs:           []*v1.PersistentVolumeClaim{claim("small", "local", "1Gi", ""), claim("big", "local", "3Gi", "")},
		PVs:            []*v1.PersistentVolume{volume("pv-a-1", "local", "1Gi", "za"), volume("pv-a-2", "local", "2Gi", "za")},
	})
	pl := New(h).(*VolumeBinding)
	pod := podWith("small", "big")
	cs := framework.NewCycleState()
	pi := framework.NewPodInfo(pod, true)
	if _, st := pl.PreFilter(cs, pi, h.Nodes()); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if st := pl.Filter(cs, pi, h.Node("a1")); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if st := pl.Reserve(cs, pi, "a1"); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if st := pl.PreBind(cs, pi, "a1"); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if ref := h.PersistentVolume("pv-a-1").Spec.ClaimRef; ref == nil || ref.Name != "small" {
		t.Errorf("pv-a-1 claimRef %+v, want the small claim", ref)
	}
	if ref := h.PersistentVolume("pv-a-2").Spec.ClaimRef; ref != nil {
		t.Errorf("pv-a-2 is too small for big, got claimRef %+v", ref)
	}
	if got := h.PersistentVolumeClaim("default", "big").Annotations[storagehelpers.AnnSelectedNode]; got != "a1" {
		t.Errorf("big claim selected-node %q, want a1", got)
	}
	if got := h.PersistentVolumeClaim("default", "small").Annotations[storagehelpers.AnnSelectedNode]; got != "" {
		t.Errorf("statically bound claim must not be annotated, got %q", got)
	}
}

func TestTranslateEBS(t *testing.T) {
	pv := volume("pv", "gp2", "1Gi", "za")
	pv.Spec.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://za/vol-0abc"}
	csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "a1", Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/aws-ebs"}}}
	got, err := translateForNode(pv, csiNode)
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.CSI == nil || got.Spec.CSI.VolumeHandle != "vol-0abc" || got.Spec.CSI.Driver != EBSCSIDriverName {
		t.Fatalf("csi source %+v", got.Spec.CSI)
	}
	if key := got.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Key; key != EBSTopologyKey {
		t.Errorf("zone key %q, want %q", key, EBSTopologyKey)
	}
	if pv.Spec.CSI != nil {
		t.Error("translation changed the original")
	}
	if same, _ := translateForNode(pv, nil); same != pv {
		t.Error("no CSINode: the PV must stay in-tree")
	}
	if _, err := EBSVolumeHandle("aws://za/bad/x"); err == nil {
		t.Error("malformed volume ID accepted")
	}
}
