package provisioning

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// discard silences the toleration matcher's logging.
var discard = logr.Discard()

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
