package pools_test

import (
	"strings"
	"testing"

	"github.com/berth-sim/berth/internal/admission"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/manifest"
)

// TestNodePoolHashIsUpstreams decodes NodePools through berth's manifest
// loader and admission defaulting and checks the hash against the numbers
// genuine Karpenter v1.6.4's NodePool.Hash() gives for the same manifests
// (the "want" values were printed by upstream; karpenter-conformance's
// TestNodePoolHashMatchesUpstream checks 200 random ones live).
func TestNodePoolHashIsUpstreams(t *testing.T) {
	const ref = "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
	const full = "15943964777272811972"
	tests := []struct {
		name, spec, meta, want string
	}{
		// Upstream hashes what the API server stored: its CRD default
		// expireAfter 720h, which berth's admission writes too.
		{"expireAfter defaulted", ref + "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]", "", "6821555240594823858"},
		{"expireAfter 720h", ref + "requirements: []\nexpireAfter: 720h", "", "6821555240594823858"},
		{"requirements are not hashed", ref + "requirements: [{key: kubernetes.io/arch, operator: In, values: [arm64]}]\nexpireAfter: 720h", "", "6821555240594823858"},
		{"everything hashed", `nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
requirements: []
taints:
- {key: dedicated, value: gpu, effect: NoSchedule}
- {key: spot, effect: PreferNoSchedule}
startupTaints:
- {key: node.cilium.io/agent-not-ready, value: "true", effect: NoExecute}
terminationGracePeriod: 1h30m
expireAfter: Never`, "labels: {team: data, tier: batch}\nannotations: {example.com/owner: ops}", full},
		// Durations are hashed parsed, taints as a set, maps by content.
		{"same template respelled and reordered", `nodeClassRef: {name: gpu, kind: EC2NodeClass, group: karpenter.k8s.aws}
requirements: [{key: karpenter.sh/capacity-type, operator: Exists}]
taints:
- {key: spot, effect: PreferNoSchedule}
- {key: dedicated, value: gpu, effect: NoSchedule}
startupTaints:
- {key: node.cilium.io/agent-not-ready, value: "true", effect: NoExecute}
terminationGracePeriod: 90m
expireAfter: Never`, "annotations: {example.com/owner: ops}\nlabels: {tier: batch, team: data}", full},
		// A terminationGracePeriod of 0s is set, so it counts; absent does not.
		{"terminationGracePeriod 0s", ref + "requirements: []\nterminationGracePeriod: 0s\nexpireAfter: 336h", "", "4699155778327255621"},
		{"terminationGracePeriod absent", ref + "requirements: []\nexpireAfter: 336h", "", "17310139521340779001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n"
			if tt.meta != "" {
				doc += "    metadata:\n" + indent(tt.meta, 6)
			}
			doc += "    spec:\n" + indent(tt.spec, 6)
			objs, err := manifest.Decode("pool.yaml", []byte(doc))
			if err != nil {
				t.Fatalf("decode: %v\n%s", err, doc)
			}
			np := objs[0].Object.(*karpv1.NodePool)
			admission.DefaultNodePool(np)
			if got := pools.NodePoolHash(np); got != tt.want {
				t.Errorf("hash = %s, want upstream's %s", got, tt.want)
			}
			// The state file and deep copies go through JSON; the number
			// must survive them.
			if got := pools.NodePoolHash(np.DeepCopy()); got != tt.want {
				t.Errorf("hash after a copy = %s, want %s", got, tt.want)
			}
		})
	}
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad) + "\n"
}
