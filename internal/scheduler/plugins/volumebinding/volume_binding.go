// Package volumebinding is upstream's VolumeBinding plugin: PreFilter sorts
// the pod's claims into bound, delayed-binding (WaitForFirstConsumer) and
// unbound immediate ones; Filter checks bound volumes' node affinity and
// whether each delayed claim can get a static volume or be provisioned on
// the node; Reserve picks the bindings for the chosen node and PreBind writes
// them (PV claimRef, PVC selected-node annotation). Upstream's PreBind then
// waits for the PV controller; berth binds the pod at once and its kubelet
// waits for the claims instead.
package volumebinding

import (
	"errors"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/component-helpers/storage/ephemeral"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Name is the plugin's name in the profile.
const Name = "VolumeBinding"

// Reasons as upstream prints them, in the order Filter reports them.
const (
	ErrReasonNodeConflict   = "node(s) didn't match PersistentVolume's node affinity"
	ErrReasonBindConflict   = "node(s) didn't find available persistent volumes to bind"
	ErrReasonNotEnoughSpace = "node(s) did not have enough free storage"
	ErrReasonPVNotExist     = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	// ErrReasonUnboundImmediate is the PreFilter rejection.
	ErrReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
)

const stateKey framework.StateKey = Name

// VolumeBinding is the plugin.
type VolumeBinding struct {
	storage framework.StorageLister
	// vacEnabled follows the VolumeAttributesClass gate (GA in 1.34).
	vacEnabled bool
}

// New builds the plugin over the handle's storage view.
func New(h framework.Handle) framework.Plugin {
	return &VolumeBinding{storage: framework.Storage(h), vacEnabled: h.Features().Version.AtLeast(34, 0)}
}

func (*VolumeBinding) Name() string { return Name }

// PodVolumeClaims is the PreFilter classification.
type PodVolumeClaims struct {
	boundClaims               []*v1.PersistentVolumeClaim
	unboundClaimsDelayBinding []*v1.PersistentVolumeClaim
	unboundClaimsImmediate    []*v1.PersistentVolumeClaim
	// unboundVolumesDelayBinding are the candidate PVs by class name.
	unboundVolumesDelayBinding map[string][]*v1.PersistentVolume
	// plan memoizes the node-independent part of Filter (see sharedPlan).
	plan        *sharedPlan
	planChecked bool
}

// BindingInfo pairs a claim with the static volume chosen for it.
type BindingInfo struct {
	pvc *v1.PersistentVolumeClaim
	pv  *v1.PersistentVolume
}

// PodVolumes is what one node needs done: static bindings and claims to provision.
type PodVolumes struct {
	StaticBindings    []*BindingInfo
	DynamicProvisions []*v1.PersistentVolumeClaim
}

type stateData struct {
	allBound         bool
	podVolumesByNode map[string]*PodVolumes
	// planned lists the nodes that passed with the shared plan's volumes
	// (sharedPlan); they are in podVolumesByNode's stead until written there.
	planned         []string
	podVolumeClaims *PodVolumeClaims
}

// podVolumes is podVolumesByNode's entry for node, or the shared plan's
// volumes when the node passed with them.
func (d *stateData) podVolumes(node string) (*PodVolumes, bool) {
	if pv, ok := d.podVolumesByNode[node]; ok {
		return pv, true
	}
	for _, name := range d.planned {
		if name == node {
			return d.podVolumeClaims.plan.volumes, true
		}
	}
	return nil, false
}

// Clone shares the data, as upstream does: Filter writes per-node results
// that Reserve later reads.
func (d *stateData) Clone() framework.StateData { return d }

// podHasPVCs looks up every claim (PVC and generic ephemeral volumes).
func (pl *VolumeBinding) podHasPVCs(pod *v1.Pod) (bool, error) {
	has := false
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name, isEphemeral := claimName(pod, vol)
		if name == "" && !isEphemeral {
			continue
		}
		has = true
		pvc := pl.storage.PersistentVolumeClaim(pod.Namespace, name)
		if pvc == nil {
			if isEphemeral {
				return has, fmt.Errorf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
			}
			return has, apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name)
		}
		if pvc.Status.Phase == v1.ClaimLost {
			return has, fmt.Errorf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", pvc.Name, pvc.Spec.VolumeName)
		}
		if pvc.DeletionTimestamp != nil {
			return has, fmt.Errorf("persistentvolumeclaim %q is being deleted", pvc.Name)
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return has, err
			}
		}
	}
	return has, nil
}

// claimName is the claim a volume uses, and whether it is ephemeral.
func claimName(pod *v1.Pod, vol *v1.Volume) (string, bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName, false
	case vol.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, vol), true
	}
	return "", false
}

// PreFilter skips pods without claims and rejects pods with an unbound
// claim that is not WaitForFirstConsumer (or is pre-bound by volumeName).
func (pl *VolumeBinding) PreFilter(state *framework.CycleState, pi *framework.PodInfo, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	pod := pi.Pod
	if has, err := pl.podHasPVCs(pod); err != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	} else if !has {
		state.Write(stateKey, &stateData{})
		return nil, framework.NewStatus(framework.Skip)
	}
	claims, err := pl.getPodVolumeClaims(pod)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(claims.unboundClaimsImmediate) > 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate)
	}
	state.Write(stateKey, &stateData{podVolumesByNode: map[string]*PodVolumes{}, podVolumeClaims: claims})
	return nil, nil
}

// isFullyBound: a volume name and the bind-completed annotation.
func isFullyBound(pvc *v1.PersistentVolumeClaim) bool {
	return pvc.Spec.VolumeName != "" && metav1.HasAnnotation(pvc.ObjectMeta, storagehelpers.AnnBindCompleted)
}

func (pl *VolumeBinding) getPodVolumeClaims(pod *v1.Pod) (*PodVolumeClaims, error) {
	c := &PodVolumeClaims{unboundVolumesDelayBinding: map[string][]*v1.PersistentVolume{}}
	for i := range pod.Spec.Volumes {
		name, isEphemeral := claimName(pod, &pod.Spec.Volumes[i])
		if name == "" && !isEphemeral {
			continue
		}
		pvc := pl.storage.PersistentVolumeClaim(pod.Namespace, name)
		if pvc == nil {
			return nil, fmt.Errorf("error getting PVC %q: %v", pod.Namespace+"/"+name, apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name))
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return nil, err
			}
		}
		if isFullyBound(pvc) {
			c.boundClaims = append(c.boundClaims, pvc)
			continue
		}
		delay, err := pl.isDelayBindingMode(pvc)
		if err != nil {
			return nil, err
		}
		if delay && pvc.Spec.VolumeName == "" {
			c.unboundClaimsDelayBinding = append(c.unboundClaimsDelayBinding, pvc)
		} else {
			c.unboundClaimsImmediate = append(c.unboundClaimsImmediate, pvc)
		}
	}
	for _, pvc := range c.unboundClaimsDelayBinding {
		class := storagehelpers.GetPersistentVolumeClaimClass(pvc)
		var pvs []*v1.PersistentVolume
		for _, pv := range pl.storage.PersistentVolumes() {
			if storagehelpers.GetPersistentVolumeClass(pv) == class {
				pvs = append(pvs, pv)
			}
		}
		c.unboundVolumesDelayBinding[class] = pvs
	}
	return c, nil
}

// isDelayBindingMode is component-helpers' IsDelayBindingMode over the lister.
func (pl *VolumeBinding) isDelayBindingMode(pvc *v1.PersistentVolumeClaim) (bool, error) {
	name := storagehelpers.GetPersistentVolumeClaimClass(pvc)
	if name == "" {
		return false, nil
	}
	class := pl.storage.StorageClass(name)
	if class == nil {
		return false, nil
	}
	if class.VolumeBindingMode == nil {
		return false, fmt.Errorf("VolumeBindingMode not set for StorageClass %q", name)
	}
	return *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, nil
}

// PreFilterExtensions: none.
func (pl *VolumeBinding) PreFilterExtensions() framework.PreFilterExtensions { return nil }

func getStateData(state *framework.CycleState) (*stateData, error) {
	s, ok := state.Read(stateKey).(*stateData)
	if !ok {
		return nil, errors.New("unable to convert state into stateData")
	}
	return s, nil
}

// Filter reports every reason the node fails, all U&U.
func (pl *VolumeBinding) Filter(state *framework.CycleState, pi *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	podVolumes, reasons, err := pl.findPodVolumes(s.podVolumeClaims, ni.Node)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(reasons) > 0 {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, reasons...)
	}
	if s.podVolumeClaims != nil && s.podVolumeClaims.plan != nil && podVolumes == s.podVolumeClaims.plan.volumes {
		s.planned = append(s.planned, ni.Name())
		return nil
	}
	s.podVolumesByNode[ni.Name()] = podVolumes
	return nil
}

// findPodVolumes is the binder's FindPodVolumes for one node.
func (pl *VolumeBinding) findPodVolumes(claims *PodVolumeClaims, node *v1.Node) (pv *PodVolumes, reasons []string, err error) {
	boundSatisfied, boundFound, unboundSatisfied, sufficientStorage := true, true, true, true
	defer func() {
		if err != nil {
			return
		}
		if !boundSatisfied {
			reasons = append(reasons, ErrReasonNodeConflict)
		}
		if !unboundSatisfied {
			reasons = append(reasons, ErrReasonBindConflict)
		}
		if !sufficientStorage {
			reasons = append(reasons, ErrReasonNotEnoughSpace)
		}
		if !boundFound {
			reasons = append(reasons, ErrReasonPVNotExist)
		}
	}()
	if len(claims.boundClaims) > 0 {
		if boundSatisfied, boundFound, err = pl.checkBoundClaims(claims.boundClaims, node); err != nil {
			return nil, nil, err
		}
	}
	if len(claims.unboundClaimsDelayBinding) == 0 {
		return &PodVolumes{}, nil, nil
	}
	if plan := pl.sharedPlanFor(claims); plan != nil {
		if plan.matchErr != nil {
			return nil, nil, plan.matchErr
		}
		unboundSatisfied, sufficientStorage, err = plan.checkProvisions(node)
		if err != nil {
			return nil, nil, err
		}
		// On failure the reasons decide and the volumes are not read.
		return plan.volumes, nil, nil
	}
	pv = &PodVolumes{}
	var toMatch, toProvision []*v1.PersistentVolumeClaim
	for _, c := range claims.unboundClaimsDelayBinding {
		if selected, ok := c.Annotations[storagehelpers.AnnSelectedNode]; ok {
			if selected != node.Name {
				unboundSatisfied = false
				return pv, nil, nil
			}
			toProvision = append(toProvision, c)
		} else {
			toMatch = append(toMatch, c)
		}
	}
	if len(toMatch) > 0 {
		var rest []*v1.PersistentVolumeClaim
		unboundSatisfied, pv.StaticBindings, rest, err = pl.findMatchingVolumes(toMatch, claims.unboundVolumesDelayBinding, node)
		if err != nil {
			return nil, nil, err
		}
		toProvision = append(toProvision, rest...)
	}
	if len(toProvision) > 0 {
		unboundSatisfied, sufficientStorage, pv.DynamicProvisions, err = pl.checkVolumeProvisions(toProvision, node)
		if err != nil {
			return nil, nil, err
		}
	}
	return pv, nil, nil
}

// sharedPlan is findPodVolumes' work on the delayed claims when it cannot
// depend on the node: no claim has a selected node yet and no claim's class
// has a candidate PV, so the static match leaves every claim to
// provisioning, and only the classes' allowedTopologies are node-specific.
// It is computed once per cycle by the same code paths, with the lookups
// done up front (nothing is written during Filter).
type sharedPlan struct {
	matchErr error
	steps    []provisionStep
	// volumes is the shared result for every node that passes.
	volumes *PodVolumes
}

// provisionStep is checkVolumeProvisions' verdict for one claim, in order:
// err ends the check with an error, unsupported rejects every node,
// otherwise terms decide.
type provisionStep struct {
	err         error
	unsupported bool
	terms       []v1.TopologySelectorTerm
}

// sharedPlanFor returns the plan, or nil when the claims do not allow one.
func (pl *VolumeBinding) sharedPlanFor(claims *PodVolumeClaims) *sharedPlan {
	if claims.planChecked {
		return claims.plan
	}
	claims.planChecked = true
	for _, c := range claims.unboundClaimsDelayBinding {
		if _, ok := c.Annotations[storagehelpers.AnnSelectedNode]; ok {
			return nil
		}
		if len(claims.unboundVolumesDelayBinding[storagehelpers.GetPersistentVolumeClaimClass(c)]) > 0 {
			return nil
		}
	}
	plan := &sharedPlan{}
	// With no candidate volume FindMatchingVolume never reads the node.
	_, _, rest, err := pl.findMatchingVolumes(claims.unboundClaimsDelayBinding, claims.unboundVolumesDelayBinding, nil)
	if err != nil {
		plan.matchErr = err
		claims.plan = plan
		return plan
	}
	for _, pvc := range rest {
		name := storagehelpers.GetPersistentVolumeClaimClass(pvc)
		if name == "" {
			plan.steps = append(plan.steps, provisionStep{err: fmt.Errorf("no class for claim %q", pvc.Namespace+"/"+pvc.Name)})
			break
		}
		class := pl.storage.StorageClass(name)
		if class == nil {
			plan.steps = append(plan.steps, provisionStep{err: fmt.Errorf("failed to find storage class %q", name)})
			break
		}
		if class.Provisioner == "" || class.Provisioner == storagehelpers.NotSupportedProvisioner {
			plan.steps = append(plan.steps, provisionStep{unsupported: true})
			break
		}
		plan.steps = append(plan.steps, provisionStep{terms: class.AllowedTopologies})
	}
	plan.volumes = &PodVolumes{DynamicProvisions: rest}
	claims.plan = plan
	return plan
}

// checkProvisions is checkVolumeProvisions over the planned steps.
func (p *sharedPlan) checkProvisions(node *v1.Node) (satisfied, sufficient bool, err error) {
	for i := range p.steps {
		st := &p.steps[i]
		switch {
		case st.err != nil:
			return false, false, st.err
		case st.unsupported:
			return false, true, nil
		case !MatchTopologySelectorTerms(st.terms, labels.Set(node.Labels)):
			return false, true, nil
		}
	}
	return true, true, nil
}

// checkBoundClaims: every bound PV must exist and admit the node (in-tree
// EBS volumes are first translated when the node has migrated the plugin).
func (pl *VolumeBinding) checkBoundClaims(claims []*v1.PersistentVolumeClaim, node *v1.Node) (satisfied, found bool, err error) {
	csiNode := pl.storage.CSINode(node.Name)
	for _, pvc := range claims {
		pv := pl.storage.PersistentVolume(pvc.Spec.VolumeName)
		if pv == nil {
			return true, false, nil
		}
		if pv, err = translateForNode(pv, csiNode); err != nil {
			return false, true, err
		}
		if storagehelpers.CheckNodeAffinity(pv, node.Labels) != nil {
			return false, true, nil
		}
	}
	return true, true, nil
}

// translateForNode is tryTranslatePVToCSI for the EBS plugin.
func translateForNode(pv *v1.PersistentVolume, csiNode *storagev1.CSINode) (*v1.PersistentVolume, error) {
	if !IsMigratableEBS(pv) || !PluginMigratedOnNode(InTreeEBSPluginName, csiNode) {
		return pv, nil
	}
	t, err := TranslateEBSPVToCSI(pv)
	if err != nil {
		return nil, fmt.Errorf("could not translate pv: %v", err)
	}
	return t, nil
}

// byPVCSize orders claims by requested storage, as upstream sorts them.
type byPVCSize []*v1.PersistentVolumeClaim

func (a byPVCSize) Len() int      { return len(a) }
func (a byPVCSize) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a byPVCSize) Less(i, j int) bool {
	iq := a[i].Spec.Resources.Requests[v1.ResourceStorage]
	jq := a[j].Spec.Resources.Requests[v1.ResourceStorage]
	return iq.Cmp(jq) == -1
}

// findMatchingVolumes picks, smallest claim first, the smallest unchosen PV
// of the claim's class that fits it and the node.
func (pl *VolumeBinding) findMatchingVolumes(claims []*v1.PersistentVolumeClaim, byClass map[string][]*v1.PersistentVolume, node *v1.Node) (bool, []*BindingInfo, []*v1.PersistentVolumeClaim, error) {
	claims = append([]*v1.PersistentVolumeClaim(nil), claims...)
	sort.Sort(byPVCSize(claims))
	chosen := map[string]*v1.PersistentVolume{}
	found := true
	var bindings []*BindingInfo
	var unbound []*v1.PersistentVolumeClaim
	for _, pvc := range claims {
		pvs := byClass[storagehelpers.GetPersistentVolumeClaimClass(pvc)]
		pv, err := storagehelpers.FindMatchingVolume(pvc, pvs, node, chosen, true, pl.vacEnabled)
		if err != nil {
			return false, nil, nil, err
		}
		if pv == nil {
			unbound = append(unbound, pvc)
			found = false
			continue
		}
		chosen[pv.Name] = pv
		bindings = append(bindings, &BindingInfo{pv: pv, pvc: pvc})
	}
	return found, bindings, unbound, nil
}

// checkVolumeProvisions: each claim's class must name a provisioner whose
// allowedTopologies admit the node. CSIStorageCapacity is not modelled
// (berth has no CSIDriver objects, and upstream then assumes enough space).
func (pl *VolumeBinding) checkVolumeProvisions(claims []*v1.PersistentVolumeClaim, node *v1.Node) (satisfied, sufficient bool, provisions []*v1.PersistentVolumeClaim, err error) {
	for _, pvc := range claims {
		name := storagehelpers.GetPersistentVolumeClaimClass(pvc)
		if name == "" {
			return false, false, nil, fmt.Errorf("no class for claim %q", pvc.Namespace+"/"+pvc.Name)
		}
		class := pl.storage.StorageClass(name)
		if class == nil {
			return false, false, nil, fmt.Errorf("failed to find storage class %q", name)
		}
		if class.Provisioner == "" || class.Provisioner == storagehelpers.NotSupportedProvisioner {
			return false, true, nil, nil
		}
		if !MatchTopologySelectorTerms(class.AllowedTopologies, labels.Set(node.Labels)) {
			return false, true, nil, nil
		}
		provisions = append(provisions, pvc)
	}
	return true, true, provisions, nil
}

// MatchTopologySelectorTerms: no terms match everything; otherwise some
// non-empty term must match all its requirements.
func MatchTopologySelectorTerms(terms []v1.TopologySelectorTerm, lbls labels.Set) bool {
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		if len(t.MatchLabelExpressions) == 0 {
			continue
		}
		sel := labels.NewSelector()
		ok := true
		for _, e := range t.MatchLabelExpressions {
			r, err := labels.NewRequirement(e.Key, selection.In, e.Values)
			if err != nil {
				ok = false
				break
			}
			sel = sel.Add(*r)
		}
		if ok && sel.Matches(lbls) {
			return true
		}
	}
	return false
}

// PreScore skips: the capacity scorer exists only with the
// StorageCapacityScoring gate, off in every supported version.
func (pl *VolumeBinding) PreScore(*framework.CycleState, *framework.PodInfo, []*framework.NodeInfo) *framework.Status {
	return framework.NewStatus(framework.Skip)
}

// Score is never reached (PreScore skips).
func (pl *VolumeBinding) Score(*framework.CycleState, *framework.PodInfo, *framework.NodeInfo) (int64, *framework.Status) {
	return 0, nil
}

// ScoreExtensions: none.
func (pl *VolumeBinding) ScoreExtensions() framework.ScoreExtensions { return nil }

// Reserve settles what PreBind will write for the chosen node: the PVs with
// their claimRef set, and the claims annotated with the node.
func (pl *VolumeBinding) Reserve(state *framework.CycleState, pi *framework.PodInfo, nodeName string) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	podVolumes, ok := s.podVolumes(nodeName)
	if !ok || pl.arePodVolumesBound(pi.Pod) {
		s.allBound = true
		return nil
	}
	var bindings []*BindingInfo
	for _, b := range podVolumes.StaticBindings {
		pv, _, err := storagehelpers.GetBindVolumeToClaim(b.pv, b.pvc)
		if err != nil {
			return framework.AsStatus(err)
		}
		bindings = append(bindings, &BindingInfo{pv: pv, pvc: b.pvc})
	}
	var provisions []*v1.PersistentVolumeClaim
	for _, c := range podVolumes.DynamicProvisions {
		clone := c.DeepCopy()
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, storagehelpers.AnnSelectedNode, nodeName)
		provisions = append(provisions, clone)
	}
	s.podVolumesByNode[nodeName] = &PodVolumes{StaticBindings: bindings, DynamicProvisions: provisions}
	s.allBound = false
	return nil
}

func (pl *VolumeBinding) arePodVolumesBound(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		name, isEphemeral := claimName(pod, &pod.Spec.Volumes[i])
		if name == "" && !isEphemeral {
			continue
		}
		pvc := pl.storage.PersistentVolumeClaim(pod.Namespace, name)
		if pvc == nil || !isFullyBound(pvc) {
			return false
		}
	}
	return true
}

// Unreserve has nothing to revert: nothing is written before PreBind.
func (pl *VolumeBinding) Unreserve(*framework.CycleState, *framework.PodInfo, string) {}

// PreBind writes the bindings: the PV controller completes static ones and
// the external provisioner creates volumes for annotated claims.
func (pl *VolumeBinding) PreBind(state *framework.CycleState, _ *framework.PodInfo, nodeName string) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.allBound {
		return nil
	}
	podVolumes, ok := s.podVolumes(nodeName)
	if !ok {
		return framework.AsStatus(fmt.Errorf("no pod volume found for node %q", nodeName))
	}
	for _, b := range podVolumes.StaticBindings {
		if err := pl.storage.UpdatePersistentVolume(b.pv); err != nil {
			return framework.AsStatus(err)
		}
	}
	for _, c := range podVolumes.DynamicProvisions {
		if err := pl.storage.UpdatePersistentVolumeClaim(c); err != nil {
			return framework.AsStatus(err)
		}
	}
	return nil
}
