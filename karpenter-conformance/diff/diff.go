// Package diff compares berth's provisioning result with genuine Karpenter's
// outcome set for the same scenario.
//
// A berth result agrees when it equals one sampled upstream outcome, where
// "equals" allows what upstream itself leaves to chance:
//
//   - instance-type lists are compared run by run of equal price, each run as
//     a set (upstream orders ties with the unstable sort.Slice); the run cut by
//     truncation to 60 is only a partial set, so only its size is compared;
//   - pod error texts are compared after scenario.CanonicalError (the
//     requirement clauses upstream orders by map walk, sorted), exactly,
//     unless upstream's canonical text for that pod differs between its
//     outcomes, in which case only the presence of an error counts.
package diff

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/berth-sim/berth/karpenter-conformance/scenario"
)

// MaxInstanceTypes is upstream's truncation (scheduling.MaxInstanceTypes).
const MaxInstanceTypes = 60

// Verdict is the comparison of one berth result with an outcome set.
type Verdict struct {
	// Agree is true when berth matched one of the outcomes.
	Agree bool
	// Outcome is the index of the matched outcome, else of the outcome whose
	// first difference came latest (the closest one).
	Outcome int
	// First is the first difference from that outcome ("" when agreeing).
	First string
}

// Compare compares berth's result with upstream's distinct outcomes (most
// frequent first, as upstream.Outcomes returns them).
func Compare(berth *scenario.Result, outcomes []*scenario.Result) Verdict {
	if len(outcomes) == 0 {
		return Verdict{First: "no upstream outcome"}
	}
	berth, outcomes = canonical(berth, outcomes)
	varying := varyingErrors(outcomes)
	best := Verdict{Outcome: -1}
	bestDepth := -1
	for i, up := range outcomes {
		depth, msg := first(berth, up, varying)
		if msg == "" {
			return Verdict{Agree: true, Outcome: i}
		}
		if depth > bestDepth {
			best, bestDepth = Verdict{Outcome: i, First: msg}, depth
		}
	}
	return best
}

// Matches reports, per outcome, whether berth's result equals it (with the
// same allowances as Compare, error texts judged over all outcomes).
func Matches(berth *scenario.Result, outcomes []*scenario.Result) []bool {
	berth, outcomes = canonical(berth, outcomes)
	varying := varyingErrors(outcomes)
	out := make([]bool, len(outcomes))
	for i, up := range outcomes {
		_, msg := first(berth, up, varying)
		out[i] = msg == ""
	}
	return out
}

// canonical applies scenario.CanonicalError to both sides' error texts.
func canonical(berth *scenario.Result, outcomes []*scenario.Result) (*scenario.Result, []*scenario.Result) {
	out := make([]*scenario.Result, len(outcomes))
	for i, o := range outcomes {
		out[i] = o.Canonical()
	}
	return berth.Canonical(), out
}

// varyingErrors are the pods whose error text differs between outcomes
// (present with two texts); their texts are compared by presence only.
func varyingErrors(outcomes []*scenario.Result) map[string]bool {
	texts := map[string]string{}
	out := map[string]bool{}
	for _, o := range outcomes {
		for _, e := range o.Errors {
			if t, ok := texts[e.Pod]; ok && t != e.Error {
				out[e.Pod] = true
			}
			texts[e.Pod] = e.Error
		}
	}
	return out
}

// first returns the first difference between berth and one upstream outcome
// ("" if none) and how far the comparison got, to pick the closest outcome.
func first(b, u *scenario.Result, varying map[string]bool) (int, string) {
	depth := 0
	n := min(len(b.NodeClaims), len(u.NodeClaims))
	for i := range n {
		if msg := claim(b.NodeClaims[i], u.NodeClaims[i]); msg != "" {
			return depth, fmt.Sprintf("nodeClaims[%d] (pool %s, pods %s): %s", i, u.NodeClaims[i].NodePool, short(u.NodeClaims[i].Pods), msg)
		}
		depth++
	}
	if len(b.NodeClaims) != len(u.NodeClaims) {
		return depth, fmt.Sprintf("%d nodeClaims, upstream %d; first extra: %s", len(b.NodeClaims), len(u.NodeClaims), extraClaim(b, u, n))
	}
	bm, um := placements(b.Existing), placements(u.Existing)
	for _, pod := range union(bm, um) {
		if bm[pod] != um[pod] {
			return depth, fmt.Sprintf("existing: pod %s on %q, upstream %q", pod, bm[pod], um[pod])
		}
		depth++
	}
	be, ue := errs(b.Errors), errs(u.Errors)
	for _, pod := range union(be, ue) {
		bt, bok := be[pod]
		ut, uok := ue[pod]
		switch {
		case bok != uok:
			return depth, fmt.Sprintf("errors: pod %s: berth %q, upstream %q", pod, bt, ut)
		case bt != ut && !varying[pod]:
			return depth, fmt.Sprintf("errors: pod %s: text differs\n  berth:    %s\n  upstream: %s", pod, bt, ut)
		}
		depth++
	}
	return depth, ""
}

func extraClaim(b, u *scenario.Result, n int) string {
	if len(b.NodeClaims) > n {
		c := b.NodeClaims[n]
		return fmt.Sprintf("berth's pool %s pods %s", c.NodePool, short(c.Pods))
	}
	c := u.NodeClaims[n]
	return fmt.Sprintf("upstream's pool %s pods %s", c.NodePool, short(c.Pods))
}

func claim(b, u scenario.NodeClaim) string {
	switch {
	case b.NodePool != u.NodePool:
		return fmt.Sprintf("pool %s, upstream %s", b.NodePool, u.NodePool)
	case !slices.Equal(b.Pods, u.Pods):
		return fmt.Sprintf("pods %v, upstream %v", b.Pods, u.Pods)
	case !slices.Equal(b.Zones, u.Zones):
		return fmt.Sprintf("zones %v, upstream %v", b.Zones, u.Zones)
	case !slices.Equal(b.CapacityTypes, u.CapacityTypes):
		return fmt.Sprintf("capacity types %v, upstream %v", b.CapacityTypes, u.CapacityTypes)
	case !slices.Equal(b.Archs, u.Archs):
		return fmt.Sprintf("archs %v, upstream %v", b.Archs, u.Archs)
	}
	if msg := InstanceTypes(b.InstanceTypes, b.Prices, u.InstanceTypes, u.Prices); msg != "" {
		return "instance types: " + msg
	}
	if msg := launch(b, u); msg != "" {
		return "launch: " + msg
	}
	return ""
}

// launch compares the launched offering; the type may differ within a run of
// equal price, since which member of the run comes first is upstream's chance.
func launch(b, u scenario.NodeClaim) string {
	bl, ul := b.Launch, u.Launch
	if bl.Zone != ul.Zone || bl.CapacityType != ul.CapacityType || bl.Price != ul.Price {
		return fmt.Sprintf("%+v, upstream %+v", bl, ul)
	}
	if bl.InstanceType == ul.InstanceType {
		return ""
	}
	bi, ui := slices.Index(b.InstanceTypes, bl.InstanceType), slices.Index(u.InstanceTypes, ul.InstanceType)
	if bi < 0 || ui < 0 || b.Prices[bi] != u.Prices[ui] {
		return fmt.Sprintf("%+v, upstream %+v", bl, ul)
	}
	return ""
}

// InstanceTypes compares two price-ordered lists, each run of equal price as
// a set; a run that reaches the truncation limit may have been cut, so only
// its size is compared. It returns "" when they agree.
func InstanceTypes(bNames []string, bPrices []float64, uNames []string, uPrices []float64) string {
	if len(bNames) != len(uNames) {
		return fmt.Sprintf("%d types, upstream %d (berth only %s; upstream only %s)", len(bNames), len(uNames),
			short(minus(bNames, uNames)), short(minus(uNames, bNames)))
	}
	for i := 0; i < len(bNames); {
		if bPrices[i] != uPrices[i] {
			return fmt.Sprintf("[%d] %s at %g, upstream %s at %g (berth only %s; upstream only %s)", i, bNames[i], bPrices[i], uNames[i], uPrices[i],
				short(minus(bNames, uNames)), short(minus(uNames, bNames)))
		}
		j := i
		for j < len(bNames) && bPrices[j] == bPrices[i] && uPrices[j] == uPrices[i] {
			j++
		}
		if j < len(bNames) && (bPrices[j] == bPrices[i]) != (uPrices[j] == uPrices[i]) {
			return fmt.Sprintf("run at %g: berth's ends at %d, upstream's does not (or the reverse)", bPrices[i], j)
		}
		cut := j == len(bNames) && len(bNames) == MaxInstanceTypes
		if !cut {
			bs, us := sorted(bNames[i:j]), sorted(uNames[i:j])
			if !slices.Equal(bs, us) {
				return fmt.Sprintf("run at %g: berth %v, upstream %v", bPrices[i], bs, us)
			}
		}
		i = j
	}
	return ""
}

func sorted(v []string) []string {
	out := slices.Clone(v)
	sort.Strings(out)
	return out
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func placements(ps []scenario.Placement) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		out[p.Pod] = p.Node
	}
	return out
}

func errs(es []scenario.PodError) map[string]string {
	out := map[string]string{}
	for _, e := range es {
		out[e.Pod] = e.Error
	}
	return out
}

func union(a, b map[string]string) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// short prints a list, eliding the middle of long ones.
func short(v []string) string {
	if len(v) <= 8 {
		return "[" + strings.Join(v, " ") + "]"
	}
	return fmt.Sprintf("[%s ... %s] (%d)", strings.Join(v[:4], " "), strings.Join(v[len(v)-2:], " "), len(v))
}

// Summary counts what two results agree on, for the agreement numbers:
// NodeClaims equal position by position, and pods whose fate (claim index,
// existing node, or error presence) is the same.
type Summary struct {
	NodeClaims, NodeClaimsAgree int
	Pods, PodsAgree             int
}

// Summarize compares berth with one upstream outcome.
func Summarize(b, u *scenario.Result) Summary {
	var s Summary
	s.NodeClaims = len(u.NodeClaims)
	for i := range min(len(b.NodeClaims), len(u.NodeClaims)) {
		if claim(b.NodeClaims[i], u.NodeClaims[i]) == "" {
			s.NodeClaimsAgree++
		}
	}
	bf, uf := fates(b), fates(u)
	s.Pods = len(uf)
	for pod, f := range uf {
		if bf[pod] == f {
			s.PodsAgree++
		}
	}
	return s
}

func fates(r *scenario.Result) map[string]string {
	out := map[string]string{}
	for i, c := range r.NodeClaims {
		for _, p := range c.Pods {
			out[p] = fmt.Sprintf("claim %d", i)
		}
	}
	for _, p := range r.Existing {
		out[p.Pod] = "node " + p.Node
	}
	for _, e := range r.Errors {
		out[e.Pod] = "error"
	}
	return out
}
