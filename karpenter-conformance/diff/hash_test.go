package diff

import (
	"fmt"
	"math/rand/v2"
	"testing"

	upv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/yaml"

	berthv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/poolhash"
)

// TestNodePoolHashMatchesUpstream writes random NodePool manifests, decodes
// each into genuine Karpenter's NodePool and into berth's (the same JSON
// decoding the harness and berth's manifest loader use) and requires berth's
// karpenter.sh/nodepool-hash to equal upstream's NodePool.Hash(). Each pool
// is also hashed again with different requirements, limits, weight and
// disruption settings, which must not change either side's number.
func TestNodePoolHashMatchesUpstream(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2024))
	distinct := map[string]bool{}
	const n = 200
	for i := range n {
		doc := randomNodePool(rng, i)
		up, berth := decodeBoth(t, doc)
		want := up.Hash()
		if got := poolhash.NodePool(berth); got != want {
			t.Fatalf("pool %d: berth hash %s, upstream %s\n%s", i, got, want, mustYAML(doc))
		}
		distinct[want] = true

		// Vary only what the hash ignores.
		spec := doc["spec"].(map[string]any)
		tmplSpec := spec["template"].(map[string]any)["spec"].(map[string]any)
		tmplSpec["requirements"] = randomRequirements(rng)
		spec["limits"] = map[string]any{"cpu": fmt.Sprint(rng.IntN(1000) + 1)}
		spec["weight"] = rng.IntN(100) + 1
		spec["disruption"] = map[string]any{"consolidateAfter": "Never", "budgets": []any{map[string]any{"nodes": "0"}}}
		up2, berth2 := decodeBoth(t, doc)
		if up2.Hash() != want {
			t.Fatalf("pool %d: upstream hash moved with ignored fields: %s -> %s", i, want, up2.Hash())
		}
		if got := poolhash.NodePool(berth2); got != want {
			t.Fatalf("pool %d: berth hash moved with ignored fields: %s -> %s", i, want, got)
		}
	}
	// The generator must actually exercise the hashed fields.
	if len(distinct) < n*9/10 {
		t.Errorf("only %d distinct hashes over %d pools", len(distinct), n)
	}
}

// TestNodePoolHashEmptyListsDiffer pins the one known departure
// (docs/karpenter-disruption.md#drift): a template that spells an empty list
// or map (`taints: []`) hashes differently upstream from one that leaves it
// out, while berth, whose objects lose empty values in JSON copies, treats
// both as absent.
func TestNodePoolHashEmptyListsDiffer(t *testing.T) {
	base := map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
			"requirements": []any{}, "expireAfter": "720h",
		}}},
	}
	up, berth := decodeBoth(t, base)
	absent := up.Hash()
	if got := poolhash.NodePool(berth); got != absent {
		t.Fatalf("berth %s, upstream %s", got, absent)
	}
	base["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["taints"] = []any{}
	up, berth = decodeBoth(t, base)
	if up.Hash() == absent {
		t.Errorf("upstream now hashes taints: [] like an absent list; berth can match it exactly")
	}
	if got := poolhash.NodePool(berth); got != absent {
		t.Errorf("berth hashes taints: [] as %s, want the absent list's %s", got, absent)
	}
}

func decodeBoth(t *testing.T, doc map[string]any) (*upv1.NodePool, *berthv1.NodePool) {
	t.Helper()
	raw := mustYAML(doc)
	up := &upv1.NodePool{}
	if err := yaml.UnmarshalStrict(raw, up); err != nil {
		t.Fatalf("upstream decode: %v\n%s", err, raw)
	}
	berth := &berthv1.NodePool{}
	if err := yaml.UnmarshalStrict(raw, berth); err != nil {
		t.Fatalf("berth decode: %v\n%s", err, raw)
	}
	return up, berth
}

func mustYAML(v any) []byte {
	raw, err := yaml.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

// randomNodePool is a NodePool manifest as a user writes it, after the API
// server's defaulting (expireAfter: 720h when absent; berth's own defaulting
// of that field is checked by the pools unit test).
func randomNodePool(rng *rand.Rand, i int) map[string]any {
	meta := map[string]any{}
	if m := randomMap(rng, 4, "team", "example.com/tier", "workload", "cost-center", "karpenter.sh/nodepool-x"); m != nil {
		meta["labels"] = m
	}
	if m := randomMap(rng, 3, "example.com/owner", "note", "karpenter.sh/do-not-sync"); m != nil {
		meta["annotations"] = m
	}
	spec := map[string]any{"requirements": randomRequirements(rng)}
	if ts := randomTaints(rng, 3); ts != nil {
		spec["taints"] = ts
	}
	if ts := randomTaints(rng, 2); ts != nil {
		spec["startupTaints"] = ts
	}
	if rng.IntN(10) > 0 {
		ref := map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pick(rng, "default", "gpu", "bottlerocket", "al2023")}
		if rng.IntN(15) == 0 {
			ref["group"] = "" // an empty string field is a zero value, skipped
		}
		spec["nodeClassRef"] = ref
	}
	spec["expireAfter"] = pick(rng, "720h", "720h", "Never", "24h", "1h30m", "90m", "336h", "30m0s", "5m", "2h45m10s")
	if rng.IntN(2) == 0 {
		spec["terminationGracePeriod"] = pick(rng, "0s", "30s", "5m", "300s", "1h", "48h", "1h30m")
	}
	tmpl := map[string]any{"spec": spec}
	if len(meta) > 0 {
		tmpl["metadata"] = meta
	}
	return map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": fmt.Sprintf("pool-%d", i)},
		"spec":     map[string]any{"template": tmpl},
	}
}

func randomMap(rng *rand.Rand, max int, keys ...string) map[string]any {
	n := rng.IntN(max + 1)
	if n == 0 {
		return nil
	}
	m := map[string]any{}
	for range n {
		m[pick(rng, keys...)] = pick(rng, "a", "b", "blue", "", "42", "x-y.z")
	}
	return m
}

func randomTaints(rng *rand.Rand, max int) []any {
	n := rng.IntN(max + 1)
	if n == 0 {
		return nil
	}
	var out []any
	for range n {
		taint := map[string]any{
			"key":    pick(rng, "dedicated", "example.com/gpu", "spot", "node.cilium.io/agent-not-ready"),
			"effect": pick(rng, "NoSchedule", "PreferNoSchedule", "NoExecute"),
		}
		if rng.IntN(2) == 0 {
			taint["value"] = pick(rng, "true", "gpu", "batch")
		}
		if rng.IntN(12) == 0 {
			taint["timeAdded"] = "2024-05-06T07:08:09Z"
		}
		out = append(out, taint)
		if rng.IntN(10) == 0 { // duplicates cancel out in upstream's set hash
			out = append(out, taint)
		}
	}
	return out
}

func randomRequirements(rng *rand.Rand) []any {
	var out []any
	for range rng.IntN(4) {
		req := map[string]any{
			"key":      pick(rng, "karpenter.sh/capacity-type", "kubernetes.io/arch", "karpenter.k8s.aws/instance-category", "topology.kubernetes.io/zone"),
			"operator": pick(rng, "In", "NotIn", "Exists"),
		}
		if req["operator"] != "Exists" {
			req["values"] = []any{pick(rng, "spot", "on-demand", "amd64", "c", "m", "us-west-2a")}
		}
		if rng.IntN(5) == 0 && req["operator"] == "In" {
			req["minValues"] = 1
		}
		out = append(out, req)
	}
	if out == nil {
		out = []any{}
	}
	return out
}

func pick(rng *rand.Rand, from ...string) string { return from[rng.IntN(len(from))] }
