package volume

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// Annotations the external provisioner writes on the PVs it creates.
const (
	annDeletionSecretName      = "volume.kubernetes.io/provisioner-deletion-secret-name"
	annDeletionSecretNamespace = "volume.kubernetes.io/provisioner-deletion-secret-namespace"
	fsTypeParameter            = "csi.storage.k8s.io/fstype"
	defaultFSType              = "ext4"
)

// provisionerSource names the external-provisioner as its events do:
// "<driver>_<leader pod>_<uuid>"; berth uses the running controller pod when
// there is one.
func provisionerSource(s *cluster.State) cluster.EventSource {
	for _, k := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[k]
		if p.Namespace == driverNamespace && strings.HasPrefix(p.Name, controllerPrefix) && p.Status.Phase == corev1.PodRunning {
			return cluster.EventSource{Component: aws.EBSCSIDriver + "_" + p.Name + "_" + string(p.UID)}
		}
	}
	return cluster.EventSource{Component: aws.EBSCSIDriver}
}

// provision is the external-provisioner with the EBS driver behind it: it
// starts when the claim names ebs.csi.aws.com (and, for WaitForFirstConsumer,
// has a selected node), and creates the volume ProvisioningDelay later.
func (c *Controller) provision(s *cluster.State, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, migrated bool, seen eventSet) bool {
	src := provisionerSource(s)
	if msg := admission.ClaimSizeProblem(class, requestBytes(claim)); msg != "" {
		return seen.emit(s, src, claim, corev1.EventTypeWarning, "ProvisioningFailed",
			fmt.Sprintf("failed to provision volume with StorageClass %q: rpc error: code = InvalidArgument desc = requested size %s", class.Name, msg))
	}
	zone, err := pickZone(s, claim, class)
	if err != nil {
		return seen.emit(s, src, claim, corev1.EventTypeWarning, "ProvisioningFailed",
			fmt.Sprintf("failed to provision volume with StorageClass %q: %v", class.Name, err))
	}
	started := seen.get(string(claim.UID), "Provisioning")
	changed := false
	if started == nil {
		changed = seen.emit(s, src, claim, corev1.EventTypeNormal, "Provisioning",
			fmt.Sprintf("External provisioner is provisioning volume for claim %q", claim.Namespace+"/"+claim.Name))
		started = seen.get(string(claim.UID), "Provisioning")
	}
	due := started.FirstTimestamp.Add(c.Delay)
	if s.Now.Before(due) {
		controllerutil.AddTimerOnce(s, cluster.Timer{At: due, Owner: c.Name(), Object: cluster.Key(claim.Namespace, claim.Name), Settling: true})
		return changed
	}
	pv := newVolume(s, claim, class, zone, migrated)
	if err := admission.Create(s, pv); err != nil {
		return false
	}
	bind(s, pv, claim)
	seen.emit(s, src, claim, corev1.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume "+pv.Name)
	return true
}

func requestBytes(claim *corev1.PersistentVolumeClaim) int64 {
	q := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	return q.Value()
}

// pickZone chooses the availability zone of a new volume as the
// external-provisioner's GenerateAccessibilityRequirements and the driver's
// pickAvailabilityZone do: the selected node's zone, else the first of the
// requisite zones (allowedTopologies, else the zones of every node the
// driver runs on) after sorting and shifting by a hash of the claim name, so
// that StatefulSet claims spread across zones.
func pickZone(s *cluster.State, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) (string, error) {
	if nodeName := claim.Annotations[storagehelpers.AnnSelectedNode]; nodeName != "" {
		node, ok := s.Nodes[nodeName]
		if !ok {
			return "", fmt.Errorf("failed to get target node: nodes %q not found", nodeName)
		}
		zone := node.Labels[corev1.LabelTopologyZone]
		if zone == "" {
			return "", fmt.Errorf("topology labels from selected node %v does not match topology keys from CSINode", node.Labels)
		}
		return zone, nil
	}
	zones := requisiteZones(s, class.AllowedTopologies)
	if len(zones) == 0 {
		return "", fmt.Errorf("no topology key found on CSINode of any node")
	}
	hash, index := claimNameHashAndIndex(claim.Name)
	return zones[(hash+index)%uint32(len(zones))], nil
}

// requisiteZones returns the sorted, distinct zones a volume may be created in.
func requisiteZones(s *cluster.State, allowed []corev1.TopologySelectorTerm) []string {
	set := map[string]bool{}
	if len(allowed) > 0 {
		for _, term := range allowed {
			for _, req := range term.MatchLabelExpressions {
				if req.Key == aws.EBSZoneTopologyKey || req.Key == corev1.LabelTopologyZone {
					for _, v := range req.Values {
						set[v] = true
					}
				}
			}
		}
	} else {
		for _, k := range cluster.SortedKeys(s.CSINodes) {
			if node, ok := s.Nodes[k]; ok && node.Labels[aws.EBSZoneTopologyKey] != "" {
				set[node.Labels[aws.EBSZoneTopologyKey]] = true
			}
		}
	}
	zones := make([]string, 0, len(set))
	for z := range set {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	return zones
}

// claimNameHashAndIndex is getPVCNameHashAndIndexOffset: for names ending in
// "-<n>" the ordinal n is an offset and only the part between the last two
// dashes is hashed (FNV-32), so the claims of one StatefulSet round-robin.
func claimNameHashAndIndex(name string) (hash, index uint32) {
	hashed := name
	if dash := strings.LastIndexByte(name, '-'); dash != -1 {
		if id, err := strconv.ParseUint(name[dash+1:], 10, 32); err == nil {
			index = uint32(id)
			hashed = name[:dash]
			if d := strings.LastIndexByte(hashed, '-'); d != -1 {
				hashed = hashed[d+1:]
			}
		}
	}
	h := fnv.New32()
	h.Write([]byte(hashed))
	return h.Sum32(), index
}

// newVolume builds the PV the external-provisioner creates for a claim:
// named pvc-<claim uid>, capacity rounded up to GiB, node affinity on the
// zone key of the driver version in use. Claims of the in-tree gp2 class
// come back in in-tree form with zone and region terms and labels
// (csi-translation-lib translateTopologyFromCSIToInTree).
func newVolume(s *cluster.State, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, zone string, migrated bool) *corev1.PersistentVolume {
	capacity := aws.EBSVolumeCapacity(claim.Spec.Resources.Requests[corev1.ResourceStorage])
	fsType := defaultFSType
	for k, v := range class.Parameters {
		if strings.EqualFold(k, fsTypeParameter) || (migrated && strings.EqualFold(k, "fsType")) {
			fsType = v
		}
	}
	volumeID := fmt.Sprintf("vol-0%016x", s.Rand.Uint64())
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name: "pvc-" + string(claim.UID),
			Annotations: map[string]string{
				storagehelpers.AnnDynamicallyProvisioned: aws.EBSCSIDriver,
				annDeletionSecretName:                    "",
				annDeletionSecretNamespace:               "",
			},
			Finalizers: []string{storagehelpers.PVDeletionProtectionFinalizer},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: capacity},
			AccessModes:                   claim.Spec.AccessModes,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, APIVersion: "v1", ResourceVersion: claim.ResourceVersion},
			PersistentVolumeReclaimPolicy: *class.ReclaimPolicy,
			StorageClassName:              class.Name,
			MountOptions:                  class.MountOptions,
			VolumeMode:                    claim.Spec.VolumeMode,
		},
	}
	zoneTerm := corev1.NodeSelectorRequirement{Key: aws.ZoneTopologyKeyForDriver(DriverVersion(s)), Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}
	terms := []corev1.NodeSelectorRequirement{zoneTerm}
	if migrated {
		region := aws.RegionOfZone(zone)
		pv.Annotations[storagehelpers.AnnDynamicallyProvisioned] = aws.InTreeEBSProvisioner
		pv.Annotations[storagehelpers.AnnMigratedTo] = aws.EBSCSIDriver
		pv.Labels = map[string]string{corev1.LabelTopologyZone: zone, corev1.LabelTopologyRegion: region}
		pv.Spec.AWSElasticBlockStore = &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://" + zone + "/" + volumeID, FSType: fsType}
		terms = []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}},
			{Key: corev1.LabelTopologyRegion, Operator: corev1.NodeSelectorOpIn, Values: []string{region}},
		}
	} else {
		pv.Spec.CSI = &corev1.CSIPersistentVolumeSource{
			Driver: aws.EBSCSIDriver, VolumeHandle: volumeID, FSType: fsType,
			VolumeAttributes: map[string]string{"storage.kubernetes.io/csiProvisionerIdentity": provisionerIdentity(s)},
		}
	}
	pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: terms}},
	}}
	return pv
}

// provisionerIdentity is "<start time in ms>-<random>-<driver>", as the
// external-provisioner stamps on CSI volumes; berth starts it with the cluster.
func provisionerIdentity(s *cluster.State) string {
	return fmt.Sprintf("%d-%d-%s", cluster.Epoch.UnixMilli(), s.Seed%10000, aws.EBSCSIDriver)
}
