package scheduling

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const zone = corev1.LabelTopologyZone

// onKey rebuilds a base requirement on another key.
func onKey(key string, r *Requirement) Requirements {
	c := r.DeepCopy()
	c.Key = key
	return NewRequirements(c)
}

func negativeName(n string) bool { return n == "D" || n == "nA" || n == "n12" }

// TestCompatibleMatrix: for a key both sides define, Compatible passes iff
// the intersection is non-empty or both sides are negative; this holds for
// well-known and custom keys alike.
func TestCompatibleMatrix(t *testing.T) {
	want := intersectionWant()
	reqs := base()
	for _, key := range []string{zone, "example.com/team"} {
		for _, a := range baseOrder {
			for _, b := range baseOrder {
				exp, _ := wantIntersection(want, a, b)
				pass := exp != "key DoesNotExist" || negativeName(a) && negativeName(b)
				node, pod := onKey(key, reqs[a]), onKey(key, reqs[b])
				if got := node.IsCompatible(pod, AllowUndefinedWellKnownLabels(CoreVocabulary)); got != pass {
					t.Errorf("%s: node %s, pod %s: compatible = %v, want %v", key, reqs[a], reqs[b], got, pass)
				}
				if got := node.Intersects(pod) == nil; got != pass {
					t.Errorf("%s: node %s, pod %s: Intersects = %v, want %v", key, reqs[a], reqs[b], got, pass)
				}
			}
		}
	}
}

// TestCompatibleUndefined: a key only the pod mentions.
func TestCompatibleUndefined(t *testing.T) {
	reqs := base()
	for _, b := range baseOrder {
		node := NewRequirements()
		// Well-known keys may be undefined on the node side when allowed.
		if err := node.Compatible(onKey(zone, reqs[b]), AllowUndefinedWellKnownLabels(CoreVocabulary)); err != nil {
			t.Errorf("zone %s vs undefined: %v", reqs[b], err)
		}
		// Without the allowance, or for a custom key, only negative pod operators pass.
		for _, pod := range []Requirements{onKey(zone, reqs[b]), onKey("example.com/team", reqs[b])} {
			opts := []CompatibilityOption{AllowUndefinedWellKnownLabels(CoreVocabulary)}
			if pod.Has(zone) {
				opts = nil
			}
			if got := node.IsCompatible(pod, opts...); got != negativeName(b) {
				t.Errorf("undefined vs pod %s: compatible = %v", pod, got)
			}
		}
	}
	// The AWS vocabulary's keys are well-known only there.
	pod := NewRequirements(NewRequirement(LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5"))
	if NewRequirements().IsCompatible(pod, AllowUndefinedWellKnownLabels(CoreVocabulary)) {
		t.Error("instance-family allowed undefined under the core vocabulary")
	}
	if !NewRequirements().IsCompatible(pod, AllowUndefinedWellKnownLabels(AWSVocabulary)) {
		t.Error("instance-family not allowed undefined under the AWS vocabulary")
	}
}

func TestCompatibleErrorTexts(t *testing.T) {
	for _, tc := range []struct {
		key, want string
	}{
		{"zone", `label "zone" does not have known values (typo of "topology.kubernetes.io/zone"?)`},
		{"region", `label "region" does not have known values (typo of "topology.kubernetes.io/region"?)`},
		{"nodepool", `label "nodepool" does not have known values (typo of "karpenter.sh/nodepool"?)`},
		{"instance-type", `label "instance-type" does not have known values (typo of "node.kubernetes.io/instance-type"?)`},
		{"arch", `label "arch" does not have known values (typo of "kubernetes.io/arch"?)`},
		{"capacity-type", `label "capacity-type" does not have known values (typo of "karpenter.sh/capacity-type"?)`},
		{"topology.kubernetesio/zone", `label "topology.kubernetesio/zone" does not have known values (typo of "topology.kubernetes.io/zone"?)`},
		{"node.io/zone", `label "node.io/zone" does not have known values (typo of "topology.kubernetes.io/zone"?)`},
		{"topology.kubernetes.io/regio", `label "topology.kubernetes.io/regio" does not have known values (typo of "topology.kubernetes.io/region"?)`},
		{"karpenter/nodepool", `label "karpenter/nodepool" does not have known values (typo of "karpenter.sh/nodepool"?)`},
		{"deployment", `label "deployment" does not have known values`},
	} {
		pod := NewRequirements(NewRequirement(tc.key, corev1.NodeSelectorOpExists))
		err := NewRequirements().Compatible(pod, AllowUndefinedWellKnownLabels(CoreVocabulary))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.key, err, tc.want)
		}
	}
	// Hints also come from the node's own keys; with several undefined keys the smallest is reported.
	node := NewRequirements(NewRequirement("example.com/team", corev1.NodeSelectorOpIn, "a"))
	pod := NewRequirements(NewRequirement("team", corev1.NodeSelectorOpIn, "a"), NewRequirement("zz", corev1.NodeSelectorOpIn, "a"))
	if err := node.Compatible(pod); err == nil || err.Error() != `label "team" does not have known values (typo of "example.com/team"?)` {
		t.Errorf("got %v", err)
	}
}

func TestIntersectsErrorTexts(t *testing.T) {
	node := NewRequirements(
		NewRequirement(zone, corev1.NodeSelectorOpIn, "us-east-1a"),
		NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64"),
		NewRequirement(CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot", "on-demand"),
	)
	pod := NewRequirements(NewRequirement(zone, corev1.NodeSelectorOpIn, "us-east-1b"))
	want := "key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1b] not in topology.kubernetes.io/zone In [us-east-1a]"
	if err := node.Compatible(pod, AllowUndefinedWellKnownLabels(CoreVocabulary)); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	pod.Add(NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64"))
	pod.Add(NewRequirement(CapacityTypeLabelKey, corev1.NodeSelectorOpNotIn, "spot", "on-demand"))
	err := node.Intersects(pod)
	want = "key karpenter.sh/capacity-type, karpenter.sh/capacity-type NotIn [on-demand spot] not in karpenter.sh/capacity-type In [on-demand spot]; " +
		"key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]; " +
		"key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1b] not in topology.kubernetes.io/zone In [us-east-1a]"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Errorf("joined error does not unwrap to 3: %v", err)
	}
	// Bounds and minValues appear in the requirement text.
	n := NewRequirements(NewRequirementWithFlexibility(LabelInstanceCPU, corev1.NodeSelectorOpLt, ptr(2), "4"))
	p := NewRequirements(NewRequirement(LabelInstanceCPU, corev1.NodeSelectorOpGt, "8"))
	want = "key karpenter.k8s.aws/instance-cpu, karpenter.k8s.aws/instance-cpu Exists >8 not in karpenter.k8s.aws/instance-cpu Exists <4 minValues 2"
	if err := n.Intersects(p); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestRequirementsAddNormalisesAndIntersects(t *testing.T) {
	r := NewLabelRequirements(map[string]string{
		"failure-domain.beta.kubernetes.io/zone":   "a",
		"failure-domain.beta.kubernetes.io/region": "r",
		"beta.kubernetes.io/arch":                  "amd64",
		"beta.kubernetes.io/os":                    "linux",
		"beta.kubernetes.io/instance-type":         "m5.large",
	})
	if got := slices.Sorted(maps.Keys(r)); !slices.Equal(got, []string{"kubernetes.io/arch", "kubernetes.io/os", "node.kubernetes.io/instance-type", "topology.kubernetes.io/region", "topology.kubernetes.io/zone"}) {
		t.Errorf("keys %v", got)
	}
	if r.Has("failure-domain.beta.kubernetes.io/zone") || !r.Get(zone).Has("a") {
		t.Errorf("alias not normalised: %s", r)
	}
	// An alias and its GA key with different values conflict.
	c := NewLabelRequirements(map[string]string{"failure-domain.beta.kubernetes.io/zone": "a", zone: "b"})
	if c.Get(zone).Operator() != corev1.NodeSelectorOpDoesNotExist {
		t.Errorf("conflicting alias: %s", c)
	}
	// Get of an undefined key reads as Exists.
	if g := r.Get("undefined"); g.Operator() != corev1.NodeSelectorOpExists || g.Key != "undefined" {
		t.Errorf("Get undefined = %s", g)
	}
	if r.HasMinValues() {
		t.Error("HasMinValues on labels")
	}
	r.Add(NewRequirementWithFlexibility(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpExists, ptr(3)))
	if !r.HasMinValues() || r.Get(corev1.LabelInstanceTypeStable).String() != "node.kubernetes.io/instance-type In [m5.large] minValues 3" {
		t.Errorf("Add minValues: %s", r.Get(corev1.LabelInstanceTypeStable))
	}
}

func TestRequirementsString(t *testing.T) {
	r := NewRequirements(
		NewRequirement("b", corev1.NodeSelectorOpIn, "1"),
		NewRequirement(corev1.LabelHostname, corev1.NodeSelectorOpIn, "hostname-placeholder-0001"),
		NewRequirement("a", corev1.NodeSelectorOpGt, "3"),
	)
	if got := r.String(); got != "a Exists >3, b In [1]" {
		t.Errorf("String = %q", got)
	}
	nsr := r.NodeSelectorRequirements()
	if len(nsr) != 3 || nsr[0].Key != "a" || nsr[1].Key != "b" || nsr[2].Key != corev1.LabelHostname {
		t.Errorf("NodeSelectorRequirements not ordered by key: %+v", nsr)
	}
}

func pod(nodeSelector map[string]string, required []corev1.NodeSelectorTerm, preferred ...corev1.PreferredSchedulingTerm) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: nodeSelector}}
	if required != nil || preferred != nil {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: preferred}}
		if required != nil {
			p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: required}
		}
	}
	return p
}

func term(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func pref(weight int32, t corev1.NodeSelectorTerm) corev1.PreferredSchedulingTerm {
	return corev1.PreferredSchedulingTerm{Weight: weight, Preference: t}
}

func TestNewPodRequirements(t *testing.T) {
	in := corev1.NodeSelectorOpIn
	for _, tc := range []struct {
		name         string
		pod          *corev1.Pod
		want, strict string
	}{
		{"none", pod(nil, nil), "", ""},
		{"nodeSelector", pod(map[string]string{"team": "a", "beta.kubernetes.io/arch": "arm64"}, nil),
			"kubernetes.io/arch In [arm64], team In [a]", "kubernetes.io/arch In [arm64], team In [a]"},
		{"first required term only", pod(nil, []corev1.NodeSelectorTerm{term(zone, in, "a", "b"), term(zone, in, "c")}),
			"topology.kubernetes.io/zone In [a b]", "topology.kubernetes.io/zone In [a b]"},
		{"empty required terms", pod(nil, []corev1.NodeSelectorTerm{}), "", ""},
		{"heaviest preferred", pod(nil, nil, pref(1, term("x", in, "light")), pref(50, term("x", in, "heavy")), pref(10, term("y", in, "mid"))),
			"x In [heavy]", ""},
		{"preferred tie keeps the first", pod(nil, nil, pref(5, term("x", in, "first")), pref(5, term("x", in, "second"))),
			"x In [first]", ""},
		{"all three intersect", pod(map[string]string{zone: "a"}, []corev1.NodeSelectorTerm{term(zone, in, "a", "b")}, pref(1, term(zone, in, "b"))),
			"topology.kubernetes.io/zone DoesNotExist", "topology.kubernetes.io/zone In [a]"},
		{"matchFields ignored", pod(nil, []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: in, Values: []string{"n"}}}}}), "", ""},
	} {
		if got := NewPodRequirements(tc.pod).String(); got != tc.want {
			t.Errorf("%s: NewPodRequirements = %q, want %q", tc.name, got, tc.want)
		}
		if got := NewStrictPodRequirements(tc.pod).String(); got != tc.strict {
			t.Errorf("%s: NewStrictPodRequirements = %q, want %q", tc.name, got, tc.strict)
		}
	}
	// The pod's preferred terms are left in their order.
	p := pod(nil, nil, pref(1, term("x", in, "a")), pref(9, term("x", in, "b")))
	NewPodRequirements(p)
	if p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight != 1 {
		t.Error("NewPodRequirements reordered the pod's preferred terms")
	}
	if !HasPreferredNodeAffinity(p) || HasPreferredNodeAffinity(pod(nil, nil)) || HasPreferredNodeAffinity(nil) {
		t.Error("HasPreferredNodeAffinity")
	}
}

func TestLabels(t *testing.T) {
	r := NewRequirements(
		NewRequirement("example.com/team", corev1.NodeSelectorOpIn, "a"),
		NewRequirement("example.com/tier", corev1.NodeSelectorOpIn, "x", "y"),
		NewRequirement("example.com/any", corev1.NodeSelectorOpExists),
		NewRequirement("example.com/gone", corev1.NodeSelectorOpDoesNotExist),
		NewRequirement("node.kubernetes.io/pool", corev1.NodeSelectorOpIn, "p"), // exception sub-domain
		NewRequirement(zone, corev1.NodeSelectorOpIn, "us-east-1a"),             // well-known: provider's job
		NewRequirement(LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5"),      // well-known in AWS
		NewRequirement("karpenter.sh/custom", corev1.NodeSelectorOpIn, "v"),     // restricted domain
		NewRequirement(corev1.LabelHostname, corev1.NodeSelectorOpIn, "h"),      // restricted label
	)
	got := r.Labels(AWSVocabulary, nil)
	want := map[string]string{"example.com/team": "a", "example.com/tier": "x", "example.com/any": "0", "node.kubernetes.io/pool": "p"}
	if !maps.Equal(got, want) {
		t.Errorf("Labels = %v, want %v", got, want)
	}
	// With an rng the draws are reproducible and allowed.
	a := r.Labels(AWSVocabulary, rand.New(rand.NewPCG(3, 3)))
	b := r.Labels(AWSVocabulary, rand.New(rand.NewPCG(3, 3)))
	if !maps.Equal(a, b) {
		t.Errorf("Labels not reproducible: %v vs %v", a, b)
	}
	if _, err := strconv.Atoi(a["example.com/any"]); err != nil || !r["example.com/tier"].Has(a["example.com/tier"]) {
		t.Errorf("Labels drew %v", a)
	}
	// The AWS group is only restricted under the AWS vocabulary.
	core := NewRequirements(NewRequirement("karpenter.k8s.aws/custom", corev1.NodeSelectorOpIn, "v")).Labels(CoreVocabulary, nil)
	if core["karpenter.k8s.aws/custom"] != "v" {
		t.Errorf("core vocabulary restricted the AWS group: %v", core)
	}
}

func TestDeepCopyRequirements(t *testing.T) {
	r := NewRequirements(NewRequirement("k", corev1.NodeSelectorOpIn, "a"))
	c := r.DeepCopy()
	c.Add(NewRequirement("k", corev1.NodeSelectorOpIn, "b"))
	c["k"].Insert("z")
	if r.Get("k").String() != "k In [a]" {
		t.Errorf("copy shares state: %s", r)
	}
}

// TestCompatibleDoesNotAllocate guards the hot path: a successful check
// (the common case inside instance-type filtering) allocates nothing.
func TestCompatibleDoesNotAllocate(t *testing.T) {
	node, pod := benchNode(), benchPod()
	opt := AllowUndefinedWellKnownLabels(AWSVocabulary)
	if err := node.Compatible(pod, opt); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = node.Compatible(pod, opt) }); n != 0 {
		t.Errorf("Compatible allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = node.Intersects(pod) }); n != 0 {
		t.Errorf("Intersects allocates %v times per call", n)
	}
}

// TestCompatibleExistingNode: an existing node is checked through its labels
// and without the well-known allowance, so every positive pod key must be a
// label of the node.
func TestCompatibleExistingNode(t *testing.T) {
	node := NewLabelRequirements(map[string]string{zone: "us-east-1a", corev1.LabelArchStable: "amd64"})
	for _, tc := range []struct {
		pod  Requirements
		want string // "" = compatible
	}{
		{NewRequirements(NewRequirement("failure-domain.beta.kubernetes.io/zone", corev1.NodeSelectorOpIn, "us-east-1a", "us-east-1b")), ""},
		{NewRequirements(NewRequirement(LabelInstanceFamily, corev1.NodeSelectorOpNotIn, "t3")), ""},
		{NewRequirements(NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpNotIn, "amd64")),
			"key kubernetes.io/arch, kubernetes.io/arch NotIn [amd64] not in kubernetes.io/arch In [amd64]"},
		{NewRequirements(NewRequirement(LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5")),
			`label "karpenter.k8s.aws/instance-family" does not have known values`},
		// The pod side is larger here: the error still names the pod's requirement first.
		{NewRequirements(
			NewRequirement(zone, corev1.NodeSelectorOpIn, "us-east-1c"),
			NewRequirement("example.com/a", corev1.NodeSelectorOpDoesNotExist),
			NewRequirement("example.com/b", corev1.NodeSelectorOpNotIn, "x"),
		), "key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1c] not in topology.kubernetes.io/zone In [us-east-1a]"},
	} {
		got := ""
		if err := node.Compatible(tc.pod); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("pod %s: %q, want %q", tc.pod, got, tc.want)
		}
	}
}
