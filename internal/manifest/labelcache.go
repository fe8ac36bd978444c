package manifest

import (
	"sync"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validLabels remembers label pairs that passed the API server's label
// checks. A scenario repeats the same few labels on thousands of objects,
// and each check is a handful of regular expressions; a pair's validity
// depends on nothing but its two strings.
var validLabels = struct {
	sync.RWMutex
	pairs map[[2]string]struct{}
}{pairs: map[[2]string]struct{}{}}

// maxRememberedLabels bounds the cache; past it, pairs are checked every time.
const maxRememberedLabels = 1 << 16

// labelsValid reports whether every label passes metav1validation's
// ValidateLabels, checking only pairs not seen valid before. When it
// returns false the caller validates the labels as usual, for the errors.
func labelsValid(labels map[string]string) bool {
	validLabels.RLock()
	unknown := 0
	for k, v := range labels {
		if _, ok := validLabels.pairs[[2]string{k, v}]; !ok {
			unknown++
		}
	}
	validLabels.RUnlock()
	if unknown == 0 {
		return true
	}
	path := field.NewPath("metadata", "labels")
	for k, v := range labels {
		if len(metav1validation.ValidateLabels(map[string]string{k: v}, path)) > 0 {
			return false
		}
	}
	validLabels.Lock()
	for k, v := range labels {
		if len(validLabels.pairs) < maxRememberedLabels {
			validLabels.pairs[[2]string{k, v}] = struct{}{}
		}
	}
	validLabels.Unlock()
	return true
}
