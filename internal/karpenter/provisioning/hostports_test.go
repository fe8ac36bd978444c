package provisioning

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestHostPortTableSharedByPool: the second pod asking for a host port does
// not get a NodeClaim of its own from the same pool, as the pool's NodeClaims
// share one host-port table (docs/karpenter-provisioning.md#host-ports).
func TestHostPortTableSharedByPool(t *testing.T) {
	var pods []*corev1.Pod
	for i := range 2 {
		p := pendingPod(fmt.Sprintf("web-%d", i), "100m", "128Mi")
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		pods = append(pods, p)
	}
	r := solve(t, &Input{NodePools: []*NodePool{pool("default", 0)}, Pods: pods})
	if len(r.NewNodeClaims) != 1 || len(r.NewNodeClaims[0].Pods) != 1 || r.NewNodeClaims[0].Pods[0].Name != "web-0" {
		t.Fatalf("claims %v", claimSummary(r))
	}
	if err := fmt.Sprint(r.PodErrors["default/web-1"]); !strings.Contains(err, "checking host port usage, pod hostport conflicts with existing hostport configuration") {
		t.Fatalf("web-1 error %q", err)
	}
}
