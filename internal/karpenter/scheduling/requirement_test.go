package scheduling

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func ptr(i int) *int { return &i }

// base are the requirements of the intersection matrix, named for the table.
func base() map[string]*Requirement {
	return map[string]*Requirement{
		"E":   NewRequirement("key", corev1.NodeSelectorOpExists),
		"D":   NewRequirement("key", corev1.NodeSelectorOpDoesNotExist),
		"A":   NewRequirement("key", corev1.NodeSelectorOpIn, "A"),
		"B":   NewRequirement("key", corev1.NodeSelectorOpIn, "B"),
		"AB":  NewRequirement("key", corev1.NodeSelectorOpIn, "A", "B"),
		"nA":  NewRequirement("key", corev1.NodeSelectorOpNotIn, "A"),
		"1":   NewRequirement("key", corev1.NodeSelectorOpIn, "1"),
		"9":   NewRequirement("key", corev1.NodeSelectorOpIn, "9"),
		"19":  NewRequirement("key", corev1.NodeSelectorOpIn, "1", "9"),
		"n12": NewRequirement("key", corev1.NodeSelectorOpNotIn, "1", "2"),
		"g1":  NewRequirement("key", corev1.NodeSelectorOpGt, "1"),
		"g9":  NewRequirement("key", corev1.NodeSelectorOpGt, "9"),
		"l1":  NewRequirement("key", corev1.NodeSelectorOpLt, "1"),
		"l9":  NewRequirement("key", corev1.NodeSelectorOpLt, "9"),
	}
}

var baseOrder = []string{"E", "D", "A", "B", "AB", "nA", "1", "9", "19", "n12", "g1", "g9", "l1", "l9"}

func TestNewRequirement(t *testing.T) {
	for _, tc := range []struct {
		op       corev1.NodeSelectorOperator
		values   []string
		wantOp   corev1.NodeSelectorOperator
		wantStr  string
		has, not []string
	}{
		{corev1.NodeSelectorOpIn, []string{"b", "a"}, corev1.NodeSelectorOpIn, "key In [a b]", []string{"a", "b"}, []string{"c", ""}},
		{corev1.NodeSelectorOpIn, nil, corev1.NodeSelectorOpDoesNotExist, "key DoesNotExist", nil, []string{"a"}},
		{corev1.NodeSelectorOpNotIn, []string{"a"}, corev1.NodeSelectorOpNotIn, "key NotIn [a]", []string{"b", "1"}, []string{"a"}},
		{corev1.NodeSelectorOpNotIn, nil, corev1.NodeSelectorOpExists, "key Exists", []string{"a"}, nil},
		{corev1.NodeSelectorOpExists, []string{"ignored"}, corev1.NodeSelectorOpExists, "key Exists", []string{"ignored", "x"}, nil},
		{corev1.NodeSelectorOpDoesNotExist, []string{"ignored"}, corev1.NodeSelectorOpDoesNotExist, "key DoesNotExist", nil, []string{"ignored"}},
		{corev1.NodeSelectorOpGt, []string{"4"}, corev1.NodeSelectorOpExists, "key Exists >4", []string{"5", "100"}, []string{"4", "3", "x", "4.5"}},
		{corev1.NodeSelectorOpLt, []string{"4"}, corev1.NodeSelectorOpExists, "key Exists <4", []string{"3", "-7"}, []string{"4", "5", "x"}},
		// Upstream relies on validation; a non-integer bound reads as 0.
		{corev1.NodeSelectorOpGt, []string{"abc"}, corev1.NodeSelectorOpExists, "key Exists >0", []string{"1"}, []string{"0"}},
		{corev1.NodeSelectorOpIn, []string{"a", "b", "c", "d", "e", "f", "g"}, corev1.NodeSelectorOpIn, "key In [a b c d e and 2 others]", []string{"g"}, []string{"h"}},
	} {
		r := NewRequirement("key", tc.op, tc.values...)
		if got := r.Operator(); got != tc.wantOp {
			t.Errorf("%s %v: Operator = %s, want %s", tc.op, tc.values, got, tc.wantOp)
		}
		if got := r.String(); got != tc.wantStr {
			t.Errorf("%s %v: String = %q, want %q", tc.op, tc.values, got, tc.wantStr)
		}
		for _, v := range tc.has {
			if !r.Has(v) {
				t.Errorf("%s %v: Has(%q) = false", tc.op, tc.values, v)
			}
		}
		for _, v := range tc.not {
			if r.Has(v) {
				t.Errorf("%s %v: Has(%q) = true", tc.op, tc.values, v)
			}
		}
	}
}

func TestNewRequirementNormalisesKey(t *testing.T) {
	for alias, key := range map[string]string{
		"failure-domain.beta.kubernetes.io/zone":   "topology.kubernetes.io/zone",
		"failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
		"beta.kubernetes.io/arch":                  "kubernetes.io/arch",
		"beta.kubernetes.io/os":                    "kubernetes.io/os",
		"beta.kubernetes.io/instance-type":         "node.kubernetes.io/instance-type",
		"example.com/team":                         "example.com/team",
	} {
		if got := NewRequirement(alias, corev1.NodeSelectorOpIn, "x").Key; got != key {
			t.Errorf("key %s normalised to %s, want %s", alias, got, key)
		}
	}
}

func TestLenAndValues(t *testing.T) {
	if got := NewRequirement("k", corev1.NodeSelectorOpNotIn, "a", "b").Len(); got != math.MaxInt64-2 {
		t.Errorf("NotIn [a b] Len = %d", got)
	}
	if got := NewRequirement("k", corev1.NodeSelectorOpExists).Len(); got != math.MaxInt64 {
		t.Errorf("Exists Len = %d", got)
	}
	r := NewRequirement("k", corev1.NodeSelectorOpIn, "c", "a", "b")
	if got := r.Values(); !slices.Equal(got, []string{"a", "b", "c"}) || r.Len() != 3 {
		t.Errorf("Values = %v, Len = %d", got, r.Len())
	}
	r.Insert("d")
	if !r.Has("d") || r.Len() != 4 {
		t.Errorf("Insert did not add d: %s", r)
	}
	ex := NewRequirement("k", corev1.NodeSelectorOpExists)
	ex.Insert("x")
	if ex.Operator() != corev1.NodeSelectorOpNotIn || ex.Has("x") {
		t.Errorf("Insert into a complement excludes the value: %s", ex)
	}
}

// TestIntersectionMatrix covers every ordered pair of operators against a
// hand-written expectation, and checks Intersection agrees value by value
// with "allowed by both" and with HasIntersection.
func TestIntersectionMatrix(t *testing.T) {
	want := intersectionWant()
	reqs := base()
	universe := []string{"A", "B", "C", "", "-3", "0", "1", "2", "5", "9", "10", "x"}
	for _, a := range baseOrder {
		for _, b := range baseOrder {
			exp, ok := wantIntersection(want, a, b)
			if !ok {
				t.Fatalf("no expectation for %s,%s", a, b)
			}
			ra, rb := reqs[a], reqs[b]
			got := ra.Intersection(rb)
			if got.String() != exp {
				t.Errorf("%s ∩ %s = %q, want %q", ra, rb, got, exp)
			}
			for _, v := range universe {
				if got.Has(v) != (ra.Has(v) && rb.Has(v)) {
					t.Errorf("%s ∩ %s: Has(%q) = %v", ra, rb, v, got.Has(v))
				}
			}
			if has := ra.HasIntersection(rb); has != (got.Len() > 0) {
				t.Errorf("%s HasIntersection %s = %v, Intersection Len %d", ra, rb, has, got.Len())
			}
		}
	}
	// Intersection never mutates its operands.
	for name, r := range base() {
		if r.String() != reqs[name].String() {
			t.Errorf("%s changed to %s", name, reqs[name])
		}
	}
}

// intersectionWant is the hand-written matrix: names from base, or a String().
func intersectionWant() map[string]string {
	want := map[string]string{
		"A,A": "A", "A,B": "D", "A,AB": "A", "A,nA": "D", "A,1": "D", "A,9": "D", "A,19": "D", "A,n12": "A",
		"A,g1": "D", "A,g9": "D", "A,l1": "D", "A,l9": "D",
		"B,B": "B", "B,AB": "B", "B,nA": "B", "B,1": "D", "B,9": "D", "B,19": "D", "B,n12": "B",
		"B,g1": "D", "B,g9": "D", "B,l1": "D", "B,l9": "D",
		"AB,AB": "AB", "AB,nA": "B", "AB,1": "D", "AB,9": "D", "AB,19": "D", "AB,n12": "AB",
		"AB,g1": "D", "AB,g9": "D", "AB,l1": "D", "AB,l9": "D",
		"nA,nA": "nA", "nA,1": "1", "nA,9": "9", "nA,19": "19", "nA,n12": "key NotIn [1 2 A]",
		// Exclusions outside the bounds are dropped, so a non-integer exclusion vanishes.
		"nA,g1": "g1", "nA,g9": "g9", "nA,l1": "l1", "nA,l9": "l9",
		"1,1": "1", "1,9": "D", "1,19": "1", "1,n12": "D", "1,g1": "D", "1,g9": "D", "1,l1": "D", "1,l9": "1",
		"9,9": "9", "9,19": "9", "9,n12": "9", "9,g1": "9", "9,g9": "D", "9,l1": "D", "9,l9": "D",
		"19,19": "19", "19,n12": "9", "19,g1": "9", "19,g9": "D", "19,l1": "D", "19,l9": "1",
		"n12,n12": "n12", "n12,g1": "key NotIn [2] >1", "n12,g9": "g9",
		"n12,l1": "l1", "n12,l9": "key NotIn [1 2] <9",
		"g1,g1": "g1", "g1,g9": "g9", "g1,l1": "D", "g1,l9": "key Exists >1 <9",
		"g9,g9": "g9", "g9,l1": "D", "g9,l9": "D",
		"l1,l1": "l1", "l1,l9": "l1",
		"l9,l9": "l9",
	}
	for _, name := range baseOrder {
		want["E,"+name] = name // Exists is the identity
		want["D,"+name] = "D"  // DoesNotExist absorbs everything
	}
	return want
}

// wantIntersection looks a pair up in either order and resolves names.
func wantIntersection(want map[string]string, a, b string) (string, bool) {
	exp, ok := want[a+","+b]
	if !ok {
		exp, ok = want[b+","+a]
	}
	if r, isName := base()[exp]; isName {
		exp = r.String()
	}
	return exp, ok
}

func TestIntersectionBoundsEdge(t *testing.T) {
	// No integer lies strictly between 1 and 2, but upstream only empties the
	// range when gt >= lt, so the pair still intersects.
	g1 := NewRequirement("k", corev1.NodeSelectorOpGt, "1")
	l2 := NewRequirement("k", corev1.NodeSelectorOpLt, "2")
	got := g1.Intersection(l2)
	if got.Operator() != corev1.NodeSelectorOpExists || !g1.HasIntersection(l2) {
		t.Errorf("Gt 1 ∩ Lt 2 = %s", got)
	}
	if v := got.Any(rand.New(rand.NewPCG(1, 2))); v != "" {
		t.Errorf("Any on an empty integer range = %q, want empty", v)
	}
	// A concrete set drops the bounds after filtering with them.
	in := NewRequirement("k", corev1.NodeSelectorOpIn, "0", "3", "8", "x")
	r := in.Intersection(g1).Intersection(NewRequirement("k", corev1.NodeSelectorOpLt, "8"))
	if r.String() != "k In [3]" {
		t.Errorf("In ∩ Gt 1 ∩ Lt 8 = %s", r)
	}
	if _, ok := r.GreaterThan(); ok {
		t.Error("concrete set kept its bound")
	}
}

func TestIntersectionMinValues(t *testing.T) {
	for _, tc := range []struct {
		a, b *Requirement
		want string
	}{
		{NewRequirementWithFlexibility("k", corev1.NodeSelectorOpIn, ptr(2), "A", "B"), NewRequirementWithFlexibility("k", corev1.NodeSelectorOpIn, ptr(1), "A"), "k In [A] minValues 2"},
		{NewRequirementWithFlexibility("k", corev1.NodeSelectorOpIn, ptr(1), "A"), NewRequirement("k", corev1.NodeSelectorOpExists), "k In [A] minValues 1"},
		{NewRequirement("k", corev1.NodeSelectorOpExists), NewRequirementWithFlexibility("k", corev1.NodeSelectorOpNotIn, ptr(3), "A"), "k NotIn [A] minValues 3"},
		// The bounds-emptied DoesNotExist keeps the larger minValues.
		{NewRequirementWithFlexibility("k", corev1.NodeSelectorOpGt, ptr(1), "1"), NewRequirementWithFlexibility("k", corev1.NodeSelectorOpLt, ptr(3), "1"), "k DoesNotExist minValues 3"},
		{NewRequirementWithFlexibility("k", corev1.NodeSelectorOpDoesNotExist, ptr(1)), NewRequirement("k", corev1.NodeSelectorOpIn, "A"), "k DoesNotExist minValues 1"},
	} {
		if got := tc.a.Intersection(tc.b).String(); got != tc.want {
			t.Errorf("%s ∩ %s = %q, want %q", tc.a, tc.b, got, tc.want)
		}
		if got := tc.b.Intersection(tc.a).String(); got != tc.want {
			t.Errorf("%s ∩ %s = %q, want %q", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestAny(t *testing.T) {
	in := NewRequirement("k", corev1.NodeSelectorOpIn, "c", "a", "b")
	if got := in.Any(nil); got != "a" {
		t.Errorf("In Any(nil) = %q, want smallest", got)
	}
	seen := map[string]bool{}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		v := in.Any(rng)
		if !in.Has(v) {
			t.Fatalf("In Any = %q not allowed", v)
		}
		seen[v] = true
	}
	if len(seen) != 3 {
		t.Errorf("In Any drew only %v from 200 draws", seen)
	}
	// Same seed, same draws.
	a, b := rand.New(rand.NewPCG(1, 9)), rand.New(rand.NewPCG(1, 9))
	ex := NewRequirement("k", corev1.NodeSelectorOpExists)
	for range 20 {
		if x, y := ex.Any(a), ex.Any(b); x != y {
			t.Fatalf("Any not reproducible: %q vs %q", x, y)
		}
	}
	bounded := NewRequirement("k", corev1.NodeSelectorOpGt, "5").Intersection(NewRequirement("k", corev1.NodeSelectorOpLt, "9"))
	for range 100 {
		v, err := strconv.Atoi(bounded.Any(rng))
		if err != nil || v <= 5 || v >= 9 {
			t.Fatalf("Gt 5 Lt 9 Any = %d (%v)", v, err)
		}
	}
	for _, tc := range []struct {
		r    *Requirement
		want string
	}{
		{NewRequirement("k", corev1.NodeSelectorOpExists), "0"},
		{NewRequirement("k", corev1.NodeSelectorOpNotIn, "0", "1"), "2"},
		{NewRequirement("k", corev1.NodeSelectorOpGt, "-10"), "-9"},
		{NewRequirement("k", corev1.NodeSelectorOpLt, "0"), ""},
		{NewRequirement("k", corev1.NodeSelectorOpGt, strconv.Itoa(math.MaxInt)), ""},
		{NewRequirement("k", corev1.NodeSelectorOpDoesNotExist), ""},
	} {
		if got := tc.r.Any(nil); got != tc.want {
			t.Errorf("%s Any(nil) = %q, want %q", tc.r, got, tc.want)
		}
	}
	// A negative lower bound must not overflow the draw.
	neg := NewRequirement("k", corev1.NodeSelectorOpGt, strconv.Itoa(math.MinInt+5))
	if v, err := strconv.Atoi(neg.Any(rng)); err != nil || v <= math.MinInt+5 {
		t.Errorf("Gt MinInt+5 Any = %d (%v)", v, err)
	}
}

func TestNodeSelectorRequirement(t *testing.T) {
	for _, tc := range []struct {
		r        *Requirement
		op       corev1.NodeSelectorOperator
		values   []string
		minValue *int
	}{
		{NewRequirementWithFlexibility("k", corev1.NodeSelectorOpIn, ptr(2), "b", "a"), corev1.NodeSelectorOpIn, []string{"a", "b"}, ptr(2)},
		{NewRequirement("k", corev1.NodeSelectorOpNotIn, "a"), corev1.NodeSelectorOpNotIn, []string{"a"}, nil},
		{NewRequirement("k", corev1.NodeSelectorOpExists), corev1.NodeSelectorOpExists, nil, nil},
		{NewRequirement("k", corev1.NodeSelectorOpDoesNotExist), corev1.NodeSelectorOpDoesNotExist, nil, nil},
		{NewRequirement("k", corev1.NodeSelectorOpLt, "3"), corev1.NodeSelectorOpLt, []string{"3"}, nil},
		// Both bounds: the Gt wins (upstream v1.6 writes one requirement per key).
		{NewRequirement("k", corev1.NodeSelectorOpGt, "1").Intersection(NewRequirement("k", corev1.NodeSelectorOpLt, "9")), corev1.NodeSelectorOpGt, []string{"1"}, nil},
	} {
		got := tc.r.NodeSelectorRequirement()
		if got.Key != "k" || got.Operator != tc.op || !slices.Equal(got.Values, tc.values) ||
			(got.MinValues == nil) != (tc.minValue == nil) || (got.MinValues != nil && *got.MinValues != *tc.minValue) {
			t.Errorf("%s -> %+v", tc.r, got)
		}
		back := NewNodeSelectorRequirementsWithMinValues(got)["k"]
		if !strings.HasPrefix(tc.r.String(), back.String()) {
			t.Errorf("round trip %s -> %s", tc.r, back)
		}
	}
}

func TestDeepCopy(t *testing.T) {
	r := NewRequirementWithFlexibility("k", corev1.NodeSelectorOpIn, ptr(1), "a")
	c := r.DeepCopy()
	c.Insert("b")
	*c.MinValues = 5
	if r.Has("b") || *r.MinValues != 1 {
		t.Errorf("copy shares state: %s", r)
	}
}
