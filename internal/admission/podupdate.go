package admission

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-sim/berth/internal/version"
)

// updatablePodSpecFields is the list the API server names when it refuses a
// pod update (pkg/apis/core/validation, v1.36.3), joined with ",".
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// legacyUpdatableFields is the older wording, seen in 1.2x clusters' errors;
// joinedListMinor is the first minor assumed to print the joined list (the
// list became a slice when in-place resize was added in 1.27: an inference,
// not checked against that release's source).
const (
	legacyUpdatableFields = "`spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, " +
		"`spec.tolerations` (only additions to existing tolerations) or " +
		"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
	joinedListMinor = 27
)

// Annotations the API server guards on update.
const (
	mirrorPodAnnotation      = "kubernetes.io/config.mirror"
	appArmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/"
)

// ValidatePodUpdate applies the API server's rules for updating a pod
// (ValidatePodUpdate): images, activeDeadlineSeconds (set, or lowered),
// tolerations (additions, or a new tolerationSeconds), scheduling gates
// (removals), terminationGracePeriodSeconds (negative to 1), and, while the
// pod is gated, additions to nodeSelector and required node affinity. Labels
// and other annotations are free. The error reads as kubectl shows it for the
// cluster's Kubernetes version v.
func ValidatePodUpdate(newPod, oldPod *corev1.Pod, v version.Version) error {
	fields := strings.Join(updatablePodSpecFields, ",")
	if !v.AtLeast(joinedListMinor, 0) {
		fields = legacyUpdatableFields
	}
	errs := podUpdateErrors(newPod, oldPod, fields)
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("The Pod %q is invalid: %v", newPod.Name, errs.ToAggregate())
}

func podUpdateErrors(newPod, oldPod *corev1.Pod, updatable string) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, annotationUpdateErrors(newPod.Annotations, oldPod.Annotations)...)
	spec := field.NewPath("spec")
	for _, c := range []struct {
		path     *field.Path
		new, old []corev1.Container
	}{{spec.Child("containers"), newPod.Spec.Containers, oldPod.Spec.Containers},
		{spec.Child("initContainers"), newPod.Spec.InitContainers, oldPod.Spec.InitContainers}} {
		if len(c.new) != len(c.old) {
			// The API server stops here: nothing else can be compared.
			return append(errs, field.Forbidden(c.path, "pod updates may not add or remove containers"))
		}
		for i, ctr := range c.new {
			if ctr.Image == "" {
				errs = append(errs, field.Required(c.path.Index(i).Child("image"), ""))
			}
			if strings.TrimSpace(ctr.Image) != ctr.Image {
				errs = append(errs, field.Invalid(c.path.Index(i).Child("image"), ctr.Image, "must not have leading or trailing whitespace"))
			}
		}
	}

	ads := spec.Child("activeDeadlineSeconds")
	switch n, o := newPod.Spec.ActiveDeadlineSeconds, oldPod.Spec.ActiveDeadlineSeconds; {
	case n != nil && (*n < 0 || *n > math.MaxInt32):
		return append(errs, field.Invalid(ads, *n, validation.InclusiveRangeError(0, math.MaxInt32)))
	case n != nil && o != nil && *o < *n:
		return append(errs, field.Invalid(ads, *n, "must be less than or equal to previous value"))
	case n == nil && o != nil:
		errs = append(errs, field.Invalid(ads, n, "must not update from a positive integer to nil value"))
	}

	errs = append(errs, onlyAddedTolerations(newPod.Spec.Tolerations, oldPod.Spec.Tolerations, spec.Child("tolerations"))...)
	errs = append(errs, onlyDeletedSchedulingGates(newPod.Spec.SchedulingGates, oldPod.Spec.SchedulingGates, spec.Child("schedulingGates"))...)

	if apiequality.Semantic.DeepEqual(newPod.Spec, oldPod.Spec) {
		return errs
	}
	// Put the old values back into the fields that may change; whatever
	// still differs is forbidden.
	munged := newPod.Spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = oldPod.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = oldPod.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = oldPod.Spec.ActiveDeadlineSeconds
	munged.SchedulingGates = oldPod.Spec.SchedulingGates
	munged.Tolerations = oldPod.Spec.Tolerations
	if g := oldPod.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 &&
		munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = g
	}
	if len(oldPod.Spec.SchedulingGates) > 0 {
		errs = append(errs, mungeGatedPlacement(munged, &oldPod.Spec, spec)...)
	}
	if !apiequality.Semantic.DeepEqual(*munged, oldPod.Spec) {
		// v1.36 appends a unified diff of the two specs as JSON (older
		// releases used go-cmp, whose output is deliberately unstable; berth
		// prints the unified diff for every version).
		specDiff := diff.Diff(oldPod.Spec, *munged)
		errs = append(errs, field.Forbidden(spec, fmt.Sprintf("pod updates may not change fields other than %s\n%v", updatable, specDiff)))
	}
	return errs
}

func annotationUpdateErrors(newAnn, oldAnn map[string]string) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("metadata", "annotations")
	for _, k := range sortedKeys(oldAnn) {
		if v, ok := newAnn[k]; ok && v == oldAnn[k] {
			continue
		}
		if strings.HasPrefix(k, appArmorAnnotationPrefix) {
			errs = append(errs, field.Forbidden(path.Key(k), "may not remove or update AppArmor annotations"))
		}
		if k == mirrorPodAnnotation {
			errs = append(errs, field.Forbidden(path.Key(k), "may not remove or update mirror pod annotation"))
		}
	}
	for _, k := range sortedKeys(newAnn) {
		if _, ok := oldAnn[k]; ok {
			continue
		}
		if strings.HasPrefix(k, appArmorAnnotationPrefix) {
			errs = append(errs, field.Forbidden(path.Key(k), "may not add AppArmor annotations"))
		}
		if k == mirrorPodAnnotation {
			errs = append(errs, field.Forbidden(path.Key(k), "may not add mirror pod annotation"))
		}
	}
	return errs
}

// onlyAddedTolerations: every old toleration must still be there, except
// that its tolerationSeconds may change.
func onlyAddedTolerations(newTols, oldTols []corev1.Toleration, path *field.Path) field.ErrorList {
	for _, old := range oldTols {
		found := false
		for _, t := range newTols {
			o := old
			o.TolerationSeconds = t.TolerationSeconds
			if reflect.DeepEqual(o, t) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(path, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return nil
}

// onlyDeletedSchedulingGates refuses gates the old pod did not have. The
// API server walks a map here; berth reports them in list order.
func onlyDeletedSchedulingGates(newGates, oldGates []corev1.PodSchedulingGate, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	old := map[string]bool{}
	for _, g := range oldGates {
		old[g.Name] = true
	}
	for i, g := range newGates {
		if !old[g.Name] {
			errs = append(errs, field.Forbidden(path.Index(i).Child("name"),
				fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return errs
}

// mungeGatedPlacement allows, while the pod is gated, additions to
// nodeSelector and to required node affinity, and puts the old values back
// into munged so that the final comparison ignores them.
func mungeGatedPlacement(munged, old *corev1.PodSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !apiequality.Semantic.DeepEqual(munged.NodeSelector, old.NodeSelector) {
		for _, k := range sortedKeys(old.NodeSelector) {
			if v, ok := munged.NodeSelector[k]; !ok || v != old.NodeSelector[k] {
				errs = append(errs, field.Invalid(spec.Child("nodeSelector"), munged.NodeSelector,
					"only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
				break
			}
		}
		munged.NodeSelector = old.NodeSelector
	}
	var oldNA, newNA *corev1.NodeAffinity
	if old.Affinity != nil {
		oldNA = old.Affinity.NodeAffinity
	}
	if munged.Affinity != nil {
		newNA = munged.Affinity.NodeAffinity
	}
	if apiequality.Semantic.DeepEqual(oldNA, newNA) {
		return errs
	}
	errs = append(errs, nodeAffinityAdditions(spec.Child("affinity", "nodeAffinity"), newNA, oldNA)...)
	switch {
	case munged.Affinity == nil && oldNA == nil:
	case munged.Affinity == nil:
		munged.Affinity = &corev1.Affinity{NodeAffinity: oldNA}
	case old.Affinity == nil && munged.Affinity.PodAffinity == nil && munged.Affinity.PodAntiAffinity == nil:
		munged.Affinity = nil
	default:
		a := *munged.Affinity
		a.NodeAffinity = oldNA
		munged.Affinity = &a
	}
	return errs
}

func nodeAffinityAdditions(path *field.Path, newNA, oldNA *corev1.NodeAffinity) field.ErrorList {
	if oldNA == nil || oldNA.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	oldTerms := oldNA.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	var newTerms []corev1.NodeSelectorTerm
	if newNA != nil && newNA.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		newTerms = newNA.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	termsPath := path.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	if len(oldTerms) > 0 && len(oldTerms) != len(newTerms) {
		return field.ErrorList{field.Invalid(termsPath, newTerms, "no additions/deletions to non-empty NodeSelectorTerms list are allowed")}
	}
	var errs field.ErrorList
	for i := range oldTerms {
		if !termOnlyAdds(newTerms[i], oldTerms[i]) {
			errs = append(errs, field.Invalid(termsPath.Index(i), newTerms[i], "only additions are allowed (no mutations or deletions)"))
		}
	}
	return errs
}

// termOnlyAdds: the old requirements are a prefix of the new ones, and an
// empty old term stays empty.
func termOnlyAdds(n, o corev1.NodeSelectorTerm) bool {
	if len(o.MatchExpressions) == 0 && len(o.MatchFields) == 0 && (len(n.MatchExpressions) > 0 || len(n.MatchFields) > 0) {
		return false
	}
	if l := len(o.MatchExpressions); l > 0 && (len(n.MatchExpressions) < l || !apiequality.Semantic.DeepEqual(n.MatchExpressions[:l], o.MatchExpressions)) {
		return false
	}
	if l := len(o.MatchFields); l > 0 && (len(n.MatchFields) < l || !apiequality.Semantic.DeepEqual(n.MatchFields[:l], o.MatchFields)) {
		return false
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
