package manifest

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-sim/berth/internal/cluster"
)

// isNotIntegerErrorMsg is the API server's text for a fractional count.
const isNotIntegerErrorMsg = "must be an integer"

// integerResources are the native resources counted in whole units
// (core helper's integerResources); extended resources are too.
var integerResources = sets.New[corev1.ResourceName](
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
	corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourceConfigMaps,
	corev1.ResourcePersistentVolumeClaims, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
)

// validateResources follows validateResourceRequirements: each limit, then
// each request with its limit check, in name order so the list is
// deterministic (upstream walks the maps in map order). Like upstream, the
// request-versus-limit errors name the requests map, not the key.
func validateResources(r *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := fldPath.Child("limits"), fldPath.Child("requests")
	for _, name := range cluster.SortedKeys(r.Limits) {
		p := limPath.Key(string(name))
		errs = append(errs, validateResourceName(name, p)...)
		errs = append(errs, validateQuantityValue(name, r.Limits[name], p)...)
	}
	for _, name := range cluster.SortedKeys(r.Requests) {
		req := r.Requests[name]
		p := reqPath.Key(string(name))
		errs = append(errs, validateResourceName(name, p)...)
		errs = append(errs, validateQuantityValue(name, req, p)...)
		limit, ok := r.Limits[name]
		switch {
		case ok && req.Cmp(limit) != 0 && !overcommitAllowed(name):
			errs = append(errs, field.Invalid(reqPath, req.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case ok && req.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(reqPath, req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !ok && !overcommitAllowed(name):
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
	}
	return errs
}

// validateResourceList checks the names and values of a plain list (pod overhead).
func validateResourceList(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range cluster.SortedKeys(list) {
		p := fldPath.Key(string(name))
		errs = append(errs, validateResourceName(name, p)...)
		errs = append(errs, validateQuantityValue(name, list[name], p)...)
	}
	return errs
}

// validateNodeResources is ValidateNodeResources: capacity, then allocatable.
func validateNodeResources(node *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name string
		list corev1.ResourceList
	}{{"capacity", node.Status.Capacity}, {"allocatable", node.Status.Allocatable}} {
		for _, name := range cluster.SortedKeys(l.list) {
			errs = append(errs, validateQuantityValue(name, l.list[name], field.NewPath("status", l.name, string(name)))...)
		}
	}
	return errs
}

func validateResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// validateQuantityValue is ValidateResourceQuantityValue: not negative, and
// whole for integer resources. Like upstream it tests MilliValue, which
// wraps for values beyond int64 (so such values pass the integer test).
func validateQuantityValue(name corev1.ResourceName, q resource.Quantity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(p, q.String(), isNegativeErrorMsg))
	}
	if integerResources.Has(name) || isExtendedResourceName(name) {
		if q.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(p, q, isNotIntegerErrorMsg))
		}
	}
	return errs
}

// isNativeResource: unprefixed or in the kubernetes.io/ namespace.
func isNativeResource(name corev1.ResourceName) bool {
	s := string(name)
	return !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix)
}

// isExtendedResourceName mirrors the core helper of that name.
func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// overcommitAllowed: only native resources other than hugepages may have a
// request below the limit (v1helper.IsOvercommitAllowed).
func overcommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}
