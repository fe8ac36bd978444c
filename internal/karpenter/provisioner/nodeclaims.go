package provisioner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// Annotations and the finalizer Karpenter puts on NodeClaims.
const (
	AnnotationMinValuesRelaxed = "karpenter.sh/nodeclaim-min-values-relaxed"
	FinalizerTermination       = "karpenter.sh/termination"
)

// validatePod is Karpenter's check of a pod's node selection: a pod using
// matchFields, an unsupported operator, a restricted label or a
// malformed requirement is ignored, as is one that asks not to run on
// Karpenter's nodes.
func validatePod(p *corev1.Pod) error {
	var terms []corev1.NodeSelectorTerm
	for k, v := range p.Spec.NodeSelector {
		terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{v}}}})
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			terms = append(terms, r.NodeSelectorTerms...)
		}
		for _, t := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, t.Preference)
		}
	}
	for _, term := range terms {
		if term.MatchFields != nil {
			return errors.New("node selector term with matchFields is not supported")
		}
		for _, r := range term.MatchExpressions {
			key := r.Key
			switch r.Operator {
			case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
				if len(r.Values) != 1 {
					return fmt.Errorf("key %s with operator %s must have a single positive integer value", key, r.Operator)
				}
				if v, err := strconv.Atoi(r.Values[0]); err != nil || v < 0 {
					return fmt.Errorf("key %s with operator %s must have a single positive integer value", key, r.Operator)
				}
			default:
				return fmt.Errorf("key %s has an unsupported operator %s", key, r.Operator)
			}
			if scheduling.AWSVocabulary.IsRestrictedLabel(key) {
				return fmt.Errorf("label %s is restricted", key)
			}
			if r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 0 {
				return fmt.Errorf("key %s with operator %s must have a value defined", key, r.Operator)
			}
		}
	}
	for _, r := range scheduling.NewPodRequirements(p) {
		if r.Key == scheduling.NodePoolLabelKey && r.Operator() == corev1.NodeSelectorOpDoesNotExist {
			return errors.New("configured to not run on a Karpenter provisioned node")
		}
	}
	return nil
}

// daemonSetPods is one pod per DaemonSet: one it already runs, else its
// template; the template's required node affinity replaces the pod's (the
// DaemonSet controller pins each pod to its node).
func daemonSetPods(s *cluster.State) []*corev1.Pod {
	byOwner := map[types.UID]*corev1.Pod{}
	for _, key := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[key]
		for _, o := range p.OwnerReferences {
			if o.Kind == "DaemonSet" && o.Controller != nil && *o.Controller {
				if _, ok := byOwner[o.UID]; !ok {
					byOwner[o.UID] = p
				}
			}
		}
	}
	var out []*corev1.Pod
	for _, key := range cluster.SortedKeys(s.DaemonSets) {
		ds := s.DaemonSets[key]
		pod := &corev1.Pod{Spec: *ds.Spec.Template.Spec.DeepCopy()}
		if p := byOwner[ds.UID]; p != nil {
			pod = p.DeepCopy()
		}
		pod.Namespace = ds.Namespace
		if pod.Labels == nil {
			pod.Labels = ds.Spec.Template.Labels
		}
		if pod.UID == "" {
			pod.UID = types.UID("daemonset-" + string(ds.UID))
		}
		if a := ds.Spec.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			if pod.Spec.Affinity == nil {
				pod.Spec.Affinity = &corev1.Affinity{}
			}
			if pod.Spec.Affinity.NodeAffinity == nil {
				pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
			}
			pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.DeepCopy()
		} else if pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil {
			pod.Spec.Affinity = pod.Spec.Affinity.DeepCopy()
			pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = nil
		}
		out = append(out, pod)
	}
	return out
}

func clusterView(s *cluster.State) *provisioning.Cluster {
	c := &provisioning.Cluster{Nodes: s.Nodes}
	for _, key := range cluster.SortedKeys(s.Pods) {
		c.Pods = append(c.Pods, s.Pods[key])
	}
	for _, key := range cluster.SortedKeys(s.Namespaces) {
		c.Namespaces = append(c.Namespaces, s.Namespaces[key])
	}
	return c
}

// create turns a solved NodeClaim into the API object, unless the pool's
// limits are already exceeded by what it runs (Karpenter checks current
// usage, so a pool can overshoot by its last claims).
func (c *Controller) create(s *cluster.State, p *pools.Pool, nc *provisioning.NewNodeClaim) (string, error) {
	usage, _ := pools.Usage(s, p)
	if err := exceededBy(p.Solver.Limits, usage); err != nil {
		return "", err
	}
	name := p.Name + "-" + s.Rand.String(5)
	for s.NodeClaims[name] != nil {
		name = p.Name + "-" + s.Rand.String(5)
	}
	reqs := scheduling.NewRequirements(nc.Requirements.Values()...)
	ordered := nc.InstanceTypes.OrderByPrice(reqs)
	if len(ordered) > provisioning.MaxInstanceTypes {
		ordered = ordered[:provisioning.MaxInstanceTypes]
	}
	names := make([]string, len(ordered))
	for i, it := range ordered {
		names[i] = it.Name
	}
	reqs.Add(scheduling.NewRequirementWithFlexibility(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn,
		reqs.Get(corev1.LabelInstanceTypeStable).MinValues, names...))
	labels := map[string]string{}
	for k, v := range p.Solver.Labels {
		labels[k] = v
	}
	labels[p.Solver.PoolLabel] = p.Name
	if p.Solver.NodeClassLabel != "" {
		labels[p.Solver.NodeClassLabel] = p.Solver.NodeClassName
	}
	annotations := map[string]string{}
	for k, v := range p.Annotations {
		annotations[k] = v
	}
	annotations[AnnotationMinValuesRelaxed] = strconv.FormatBool(nc.MinValuesRelaxed)
	if np := s.NodePools[p.Name]; np != nil && p.APIVersion == pools.APIVersionV1 {
		// The template hash drift compares against (docs/karpenter-disruption.md#drift).
		annotations[pools.AnnotationNodePoolHash] = pools.NodePoolHash(np)
		annotations[pools.AnnotationNodePoolHashVersion] = pools.NodePoolHashVersion
	}
	controller := true
	obj := &karpv1.NodeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: karpv1.SchemeGroupVersion.String(), Kind: "NodeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: p.Name + "-", Labels: labels, Annotations: annotations,
			Finalizers: []string{FinalizerTermination},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: p.APIVersion, Kind: p.Kind, Name: p.Name, UID: p.UID,
				BlockOwnerDeletion: &controller}}},
		Spec: karpv1.NodeClaimSpec{Taints: p.Solver.Taints, StartupTaints: p.Solver.StartupTaints,
			Resources: karpv1.ResourceRequirements{Requests: nc.Requests}, ExpireAfter: p.ExpireAfterSpec},
	}
	if ref := p.NodeClassRef; strings.HasPrefix(ref, "EC2NodeClass/") {
		obj.Spec.NodeClassRef = &karpv1.NodeClassReference{Group: karpv1.AWSGroup, Kind: "EC2NodeClass", Name: strings.TrimPrefix(ref, "EC2NodeClass/")}
	}
	for _, r := range reqs.NodeSelectorRequirements() {
		obj.Spec.Requirements = append(obj.Spec.Requirements, karpv1.NodeSelectorRequirementWithMinValues{Key: r.Key, Operator: r.Operator,
			Values: r.Values, MinValues: r.MinValues})
	}
	obj.UID = types.UID(s.NewUID())
	obj.CreationTimestamp = metav1.NewTime(s.Now)
	obj.ResourceVersion = s.Bump()
	if s.NodeClaims == nil {
		s.NodeClaims = map[string]*karpv1.NodeClaim{}
	}
	s.NodeClaims[name] = obj
	s.NoteCreated(obj.UID)
	return name, nil
}

// exceededBy is Limits.ExceededBy: the first limited resource whose usage
// is above its limit.
func exceededBy(limits, usage corev1.ResourceList) error {
	for _, name := range cluster.SortedKeys(usage) {
		limit, ok := limits[name]
		if !ok {
			continue
		}
		if u := usage[name]; u.Cmp(limit) > 0 {
			return fmt.Errorf("resource usage exceeds limit (limit=%s, resource-name=%s, usage=%s)", limit.AsDec(), name, u.AsDec())
		}
	}
	return nil
}
