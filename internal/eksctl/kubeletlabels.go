package eksctl

import (
	"fmt"
	"sort"
	"strings"

	"github.com/berth-sim/berth/internal/version"
)

// The kubelet (>= 1.16) refuses --node-labels in the kubernetes.io and
// k8s.io namespaces unless they are in its own allowed set
// (pkg/kubelet/apis/well_known_labels.go) or under an allowed prefix; the
// node then never joins. eksctl passes node-group labels as --node-labels.
var (
	kubeletAllowedLabels = []string{
		"beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "beta.kubernetes.io/os",
		"failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
		"kubernetes.io/arch", "kubernetes.io/hostname", "kubernetes.io/os",
		"node.kubernetes.io/instance-type", "topology.kubernetes.io/region", "topology.kubernetes.io/zone",
	}
	kubeletAllowedNamespaces = []string{"kubelet.kubernetes.io", "node.kubernetes.io"}
)

// kubeletLabelRuleMinor is the first minor whose kubelet enforces the rule.
const kubeletLabelRuleMinor = 16

func labelNamespace(key string) string {
	if ns, _, ok := strings.Cut(key, "/"); ok {
		return ns
	}
	return ""
}

func inDomain(ns, domain string) bool { return ns == domain || strings.HasSuffix(ns, "."+domain) }

// isKubeletLabel is IsKubeletLabel: in the allowed set or under an allowed namespace.
func isKubeletLabel(key string) bool {
	for _, l := range kubeletAllowedLabels {
		if l == key {
			return true
		}
	}
	ns := labelNamespace(key)
	for _, allowed := range kubeletAllowedNamespaces {
		if inDomain(ns, allowed) {
			return true
		}
	}
	return false
}

// checkKubeletLabels returns the kubelet's own error for the labels it
// would refuse, or nil.
func checkKubeletLabels(labels map[string]string, v version.Version) error {
	if v.Major == 1 && v.Minor < kubeletLabelRuleMinor {
		return nil
	}
	var unknown []string
	for k := range labels {
		ns := labelNamespace(k)
		if (inDomain(ns, "kubernetes.io") || inDomain(ns, "k8s.io")) && !isKubeletLabel(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [%s]\n"+
		"--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (%s) or be in the specifically allowed set (%s)",
		strings.Join(unknown, " "), strings.Join(kubeletAllowedNamespaces, ", "), strings.Join(kubeletAllowedLabels, ", "))
}
