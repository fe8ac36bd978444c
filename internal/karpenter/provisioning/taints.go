package provisioning

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// discard silences the toleration matcher's logging.
var discard = logr.Discard()

// tolerated is tolerates without the worded error, for the checks whose
// error nobody reads.
func tolerated(taints []corev1.Taint, tolerations []corev1.Toleration) bool {
	for i := range taints {
		ok := false
		for j := range tolerations {
			if tolerations[j].ToleratesTaint(discard, &taints[i], false) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// tolerates checks every taint against the tolerations and reports each
// one not tolerated, as Karpenter's Taints.Tolerates does.
func tolerates(taints []corev1.Taint, tolerations []corev1.Toleration) error {
	var errs []error
	for i := range taints {
		taint := &taints[i]
		ok := false
		for j := range tolerations {
			if tolerations[j].ToleratesTaint(discard, taint, false) {
				ok = true
				break
			}
		}
		if !ok {
			errs = append(errs, withValues(errors.New("did not tolerate taint"), "taint", prettyTaint(*taint)))
		}
	}
	return combine(errs...)
}

func prettyTaint(t corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}
