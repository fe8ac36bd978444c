package generator

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Storage in generated scenarios. Volumes draw from their own random
// source (seeded from the scenario name), so the rest of a seed's scenario
// is the same with or without them.
//
// The harness runs no PV controller and upstream's VolumeBinding PreBind
// would wait for one, so every claim a pod can be scheduled with is bound
// already; the unbound claims (Immediate, WaitForFirstConsumer without a
// provisioner and without an Available volume) and missing claims make the
// pod unschedulable. Bound volumes carry zone node affinity and zone labels
// (VolumeBinding, VolumeZone), some are in-tree EBS (CSI translation),
// some ReadWriteOncePod (VolumeRestrictions), CSINodes carry small attach
// limits (NodeVolumeLimits), and inline EBS volumes conflict on a node.
const (
	volumeScenarioP = 0.35
	volumePodP      = 0.35
	ebsDriver       = "ebs.csi.aws.com"
	inTreeEBS       = "kubernetes.io/aws-ebs"
	missingClaim    = "missing-claim"
)

type storageGen struct {
	r *rand.Rand
	// claims lists, per namespace, the claims a pod may use.
	bound, failing map[string][]string
}

func (g *gen) volumeRand() *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(g.sc.Name))
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x5851f42d4c957f2d))
}

func storageClass(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	reclaim := v1.PersistentVolumeReclaimDelete
	return &storagev1.StorageClass{TypeMeta: metav1.TypeMeta{Kind: "StorageClass", APIVersion: "storage.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode, ReclaimPolicy: &reclaim}
}

// addStorage makes the classes, CSINodes, bound volume/claim pairs and the
// failing claims, in roughly a third of the scenarios.
func (g *gen) addStorage() {
	r := g.volumeRand()
	if r.Float64() >= volumeScenarioP {
		return
	}
	st := &storageGen{r: r, bound: map[string][]string{}, failing: map[string][]string{}}
	g.storage = st
	wffc, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	g.sc.StorageClasses = append(g.sc.StorageClasses,
		storageClass("ebs-wffc", ebsDriver, wffc), storageClass("ebs-immediate", ebsDriver, imm),
		storageClass("local", "kubernetes.io/no-provisioner", wffc), storageClass("gp2", inTreeEBS, wffc))
	for _, name := range g.nodeNames {
		if r.Float64() < 0.3 {
			continue
		}
		count := int32(1 + r.IntN(3))
		g.sc.CSINodes = append(g.sc.CSINodes, &storagev1.CSINode{
			TypeMeta: metav1.TypeMeta{Kind: "CSINode", APIVersion: "storage.k8s.io/v1"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
				v1.MigratedPluginsAnnotationKey: inTreeEBS}},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: ebsDriver, NodeID: "i-" + name,
				TopologyKeys: []string{"topology.ebs.csi.aws.com/zone"}, Allocatable: &storagev1.VolumeNodeResources{Count: &count}}}},
		})
	}
	for i, n := 0, 4+r.IntN(8); i < n; i++ {
		g.addBoundPair(st, i)
	}
	for _, ns := range namespaces {
		for i, class := range []string{"ebs-immediate", "local"} {
			name := fmt.Sprintf("unbound-%d", i)
			g.sc.PersistentVolumeClaims = append(g.sc.PersistentVolumeClaims, newClaim(ns, name, class, "1Gi", v1.ReadWriteOnce))
			st.failing[ns] = append(st.failing[ns], name)
		}
		st.failing[ns] = append(st.failing[ns], missingClaim)
	}
}

func newClaim(ns, name, class, size string, mode v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{TypeMeta: metav1.TypeMeta{Kind: "PersistentVolumeClaim", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-pvc-" + ns + "-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []v1.PersistentVolumeAccessMode{mode},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}}
}

// addBoundPair adds a claim bound to a volume, as the PV controller leaves them.
func (g *gen) addBoundPair(st *storageGen, i int) {
	r := st.r
	ns := namespaces[r.IntN(len(namespaces))]
	class := []string{"ebs-wffc", "gp2", "local"}[r.IntN(3)]
	mode := v1.ReadWriteOnce
	if r.Float64() < 0.15 {
		mode = v1.ReadWriteOncePod
	}
	name := fmt.Sprintf("data-%d", i)
	pvc := newClaim(ns, name, class, "10Gi", mode)
	pvName := fmt.Sprintf("pv-%03d", i)
	pvc.Spec.VolumeName = pvName
	pvc.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
	pvc.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, AccessModes: pvc.Spec.AccessModes,
		Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")}}
	pv := &v1.PersistentVolume{TypeMeta: metav1.TypeMeta{Kind: "PersistentVolume", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: v1.PersistentVolumeSpec{StorageClassName: class, AccessModes: pvc.Spec.AccessModes,
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			ClaimRef:                      &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: name, UID: pvc.UID}},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound}}
	zone := zones[r.IntN(len(zones))]
	volumeID := fmt.Sprintf("vol-%017x", r.Uint64()>>4)
	switch class {
	case "gp2":
		pv.Spec.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://" + zone + "/" + volumeID, FSType: "ext4"}
		pv.Labels = map[string]string{v1.LabelTopologyZone: zone, v1.LabelTopologyRegion: region}
		if r.Float64() < 0.3 {
			pv.Labels = map[string]string{v1.LabelFailureDomainBetaZone: zone + "__" + zones[r.IntN(len(zones))]}
		}
	case "ebs-wffc":
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: ebsDriver, VolumeHandle: volumeID, FSType: "ext4"}
	default:
		pv.Spec.Local = &v1.LocalVolumeSource{Path: "/mnt/disks/" + pvName}
	}
	switch key := r.IntN(4); {
	case class == "local":
		node := g.nodeNames[r.IntN(len(g.nodeNames))]
		pv.Spec.NodeAffinity = nodeAffinity(v1.LabelHostname, node)
	case key < 3:
		pv.Spec.NodeAffinity = nodeAffinity(v1.LabelTopologyZone, zone)
	}
	g.sc.PersistentVolumes = append(g.sc.PersistentVolumes, pv)
	g.sc.PersistentVolumeClaims = append(g.sc.PersistentVolumeClaims, pvc)
	st.bound[ns] = append(st.bound[ns], name)
}

func nodeAffinity(key, value string) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}}}}}}
}

// addPodVolumes gives some pods claims (bound ones; for pending pods also
// failing ones) and inline EBS volumes.
func (g *gen) addPodVolumes(pod *v1.Pod, existing bool) {
	st := g.storage
	if st == nil || st.r.Float64() >= volumePodP {
		return
	}
	r := st.r
	add := func(name string) {
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == name {
				return
			}
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: fmt.Sprintf("vol-%d", len(pod.Spec.Volumes)),
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
	}
	for k := 1 + r.IntN(2); k > 0; k-- {
		bound := st.bound[pod.Namespace]
		switch {
		case !existing && r.Float64() < 0.25:
			failing := st.failing[pod.Namespace]
			add(failing[r.IntN(len(failing))])
		case len(bound) > 0:
			add(bound[r.IntN(len(bound))])
		}
	}
	if r.Float64() < 0.2 {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "inline-ebs", VolumeSource: v1.VolumeSource{
			AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: fmt.Sprintf("vol-00000000000000%03d", r.IntN(4))}}})
	}
}
