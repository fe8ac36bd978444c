package volume

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// Name is the controller's name, also the source of its events.
const Name = "persistentvolume-controller"

// ProvisioningDelay models the external provisioner's CreateVolume: the EBS
// CreateVolume call plus the driver's wait for the volume to become
// `available`, typically a few seconds (docs/eks.md, EBS volumes, puts the whole
// claim-to-running path at 10–20 s, most of it attach and mount).
const ProvisioningDelay = 5 * time.Second

var source = cluster.EventSource{Component: Name}

// Controller binds claims to volumes and runs the EBS CSI provisioner.
type Controller struct {
	// Delay is how long provisioning one volume takes.
	Delay time.Duration
}

// New returns the controller with the modelled provisioning delay.
func New() *Controller { return &Controller{Delay: ProvisioningDelay} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return "persistentvolume-binder" }

// Sync registers the EBS driver on nodes, marks new volumes Available and
// drives every unbound claim one step: bind to a matching volume, wait for
// the first consumer, or provision.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	changed := false
	if DriverInstalled(s) {
		for _, k := range cluster.SortedKeys(s.Nodes) {
			if n := s.Nodes[k]; runsNodePlugin(n) && EnsureCSINode(s, n) {
				changed = true
			}
		}
	}
	for _, k := range cluster.SortedKeys(s.PersistentVolumes) {
		pv := s.PersistentVolumes[k]
		if pv.Status.Phase == corev1.VolumePending || pv.Status.Phase == "" {
			pv.Status.Phase = corev1.VolumeAvailable
			pv.ResourceVersion = s.Bump()
			changed = true
		}
	}
	var seen eventSet
	for _, k := range cluster.SortedKeys(s.PersistentVolumeClaims) {
		claim := s.PersistentVolumeClaims[k]
		if claim.DeletionTimestamp != nil || claim.Status.Phase == corev1.ClaimBound {
			continue
		}
		if seen == nil {
			seen = newEventSet(s)
		}
		if claim.Spec.VolumeName != "" {
			changed = syncPreboundClaim(s, claim, seen) || changed
			continue
		}
		ch, err := c.syncUnboundClaim(s, claim, seen)
		if err != nil {
			return changed, err
		}
		changed = changed || ch
	}
	return changed, nil
}

// syncUnboundClaim follows syncUnboundClaim in pkg/controller/volume/persistentvolume.
func (c *Controller) syncUnboundClaim(s *cluster.State, claim *corev1.PersistentVolumeClaim, seen eventSet) (bool, error) {
	className := storagehelpers.GetPersistentVolumeClaimClass(claim)
	class := s.StorageClasses[className]
	delayBinding := class != nil && class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
	volume, err := findBestMatchForClaim(s, claim, delayBinding)
	if err != nil {
		return false, err
	}
	if volume != nil {
		bind(s, volume, claim)
		return true, nil
	}
	switch {
	case delayBinding && !storagehelpers.IsDelayBindingProvisioning(claim):
		return seen.emit(s, source, claim, corev1.EventTypeNormal, "WaitForFirstConsumer", "waiting for first consumer to be created before binding"), nil
	case className != "":
		return c.provisionClaim(s, claim, class, seen), nil
	}
	return seen.emit(s, source, claim, corev1.EventTypeNormal, "FailedBinding", "no persistent volumes available for this claim and no storage class is set"), nil
}

// syncPreboundClaim is syncUnboundClaim's branch for a claim that names its
// volume: bind it if the volume is free (or already reserved for this claim)
// and satisfies the claim; otherwise the claim stays Pending.
func syncPreboundClaim(s *cluster.State, claim *corev1.PersistentVolumeClaim, seen eventSet) bool {
	volume, ok := s.PersistentVolumes[claim.Spec.VolumeName]
	if !ok {
		return false // the volume may still be created
	}
	if ref := volume.Spec.ClaimRef; ref != nil {
		if ref.Name != claim.Name || ref.Namespace != claim.Namespace || (ref.UID != "" && ref.UID != claim.UID) {
			return false // bound to another claim
		}
	}
	if why := volumeMismatch(volume, claim); why != "" {
		return seen.emit(s, source, claim, corev1.EventTypeWarning, "VolumeMismatch",
			fmt.Sprintf("Cannot bind to requested volume %q: %s", volume.Name, why))
	}
	bind(s, volume, claim)
	return true
}

// volumeMismatch is checkVolumeSatisfyClaim's verdict, "" when the volume fits.
func volumeMismatch(volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) string {
	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity := volume.Spec.Capacity[corev1.ResourceStorage]
	switch {
	case requested.Cmp(capacity) > 0:
		return "requested PV is too small"
	case storagehelpers.GetPersistentVolumeClass(volume) != storagehelpers.GetPersistentVolumeClaimClass(claim):
		return "storageClassName does not match"
	case storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &volume.Spec):
		return "incompatible volumeMode"
	case !storagehelpers.CheckAccessModes(claim, volume):
		return "incompatible accessMode"
	}
	return ""
}

// provisionClaim is the PV controller's half of dynamic provisioning: name
// the provisioner on the claim and wait for it (EBS is always external).
func (c *Controller) provisionClaim(s *cluster.State, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, seen eventSet) bool {
	if class == nil {
		msg := fmt.Sprintf("storageclass.storage.k8s.io %q not found", storagehelpers.GetPersistentVolumeClaimClass(claim))
		return seen.emit(s, source, claim, corev1.EventTypeWarning, "ProvisioningFailed", msg)
	}
	provisioner := class.Provisioner
	migrated := provisioner == aws.InTreeEBSProvisioner
	if migrated {
		provisioner = aws.EBSCSIDriver
	}
	changed := false
	if claim.Annotations[storagehelpers.AnnStorageProvisioner] != provisioner {
		if claim.Annotations == nil {
			claim.Annotations = map[string]string{}
		}
		claim.Annotations[storagehelpers.AnnStorageProvisioner] = provisioner
		claim.Annotations[storagehelpers.AnnBetaStorageProvisioner] = provisioner
		if migrated {
			claim.Annotations[storagehelpers.AnnMigratedTo] = aws.EBSCSIDriver
		}
		claim.ResourceVersion = s.Bump()
		changed = true
	}
	msg := fmt.Sprintf("Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.", provisioner)
	if seen.emit(s, source, claim, corev1.EventTypeNormal, "ExternalProvisioning", msg) {
		changed = true
	}
	if aws.IsEBSProvisioner(class.Provisioner) && DriverInstalled(s) {
		if c.provision(s, claim, class, migrated, seen) {
			changed = true
		}
	}
	return changed
}

// bind completes a binding in both directions, as bindVolumeToClaim,
// bindClaimToVolume and the status updates do.
func bind(s *cluster.State, volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) {
	oldVolume, oldClaim := volume.DeepCopy(), claim.DeepCopy()
	bound, _, err := storagehelpers.GetBindVolumeToClaim(volume, claim)
	if err == nil {
		*volume = *bound
	}
	// GetBindVolumeToClaim takes the claim reference through the scheme; keep
	// the API version explicit whatever the claim's TypeMeta says.
	volume.Spec.ClaimRef.Kind, volume.Spec.ClaimRef.APIVersion = "PersistentVolumeClaim", "v1"
	volume.Status.Phase = corev1.VolumeBound
	volume.Status.LastPhaseTransitionTime = ptrTime(s.Now)
	volume.ResourceVersion = s.Bump()

	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Spec.VolumeName = volume.Name
	claim.Annotations[storagehelpers.AnnBoundByController] = "yes"
	claim.Annotations[storagehelpers.AnnBindCompleted] = "yes"
	claim.Status.Phase = corev1.ClaimBound
	claim.Status.AccessModes = volume.Spec.AccessModes
	claim.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: volume.Spec.Capacity[corev1.ResourceStorage]}
	claim.ResourceVersion = s.Bump()
	// A bound claim may unblock pods waiting on it: PV and PVC updates.
	s.ObjectUpdated(oldVolume, volume)
	s.ObjectUpdated(oldClaim, claim)
}

func ptrTime(t time.Time) *metav1.Time { v := metav1.NewTime(t); return &v }

// findBestMatchForClaim is persistentVolumeOrderedIndex.findByClaim: the
// volumes are grouped by access-mode set, the groups whose modes include
// all of the claim's are tried from the fewest modes up (ties by text), and
// the first group with a match yields its smallest fitting volume.
func findBestMatchForClaim(s *cluster.State, claim *corev1.PersistentVolumeClaim, delayBinding bool) (*corev1.PersistentVolume, error) {
	groups := map[string][]*corev1.PersistentVolume{}
	var keys []string
	for _, k := range cluster.SortedKeys(s.PersistentVolumes) {
		pv := s.PersistentVolumes[k]
		if !storagehelpers.CheckAccessModes(claim, pv) {
			continue
		}
		key := fmt.Sprint(pv.Spec.AccessModes)
		if _, ok := groups[key]; !ok {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], pv)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := groups[keys[i]][0].Spec.AccessModes, groups[keys[j]][0].Spec.AccessModes
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return keys[i] < keys[j]
	})
	for _, key := range keys {
		pv, err := storagehelpers.FindMatchingVolume(claim, groups[key], nil, nil, delayBinding, true)
		if err != nil || pv != nil {
			return pv, err
		}
	}
	return nil, nil
}

// eventSet remembers which (object, reason) events exist, so each step of a
// claim's life is reported once rather than on every reconcile round.
type eventSet map[string]*corev1.Event

func newEventSet(s *cluster.State) eventSet {
	set := eventSet{}
	for _, e := range s.Events {
		set[string(e.InvolvedObject.UID)+"\x00"+e.Reason] = e
	}
	return set
}

func (set eventSet) get(uid, reason string) *corev1.Event { return set[uid+"\x00"+reason] }

// emit records the event unless the object already has one with this reason.
func (set eventSet) emit(s *cluster.State, src cluster.EventSource, claim *corev1.PersistentVolumeClaim, eventType, reason, msg string) bool {
	key := string(claim.UID) + "\x00" + reason
	if _, ok := set[key]; ok {
		return false
	}
	set[key] = s.Record(src, cluster.Regarding("PersistentVolumeClaim", "v1", claim), eventType, reason, msg)
	return true
}
