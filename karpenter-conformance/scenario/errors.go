package scenario

import (
	"slices"
	"strings"
)

// requirementsPrefix introduces the requirement clauses of a NodeClaim
// compatibility error ("incompatible requirements, key ..., ...; key ...").
const requirementsPrefix = "incompatible requirements, "

// CanonicalError puts the parts of a pod error text that upstream orders by
// map walk into a fixed order. Requirements.Intersects ranges over a map of
// keys and appends one "key K, ..." clause per conflicting key, and the
// clauses are joined with "; ", so one pod's text comes out in several
// orders from run to run. Each such run of clauses is sorted; everything
// else (the order of the pools' and existing nodes' errors) is kept.
func CanonicalError(text string) string {
	parts := strings.Split(text, "; ")
	out := make([]string, 0, len(parts))
	for i := 0; i < len(parts); {
		prefix, clause, ok := keyClause(parts[i])
		if !ok {
			out = append(out, parts[i])
			i++
			continue
		}
		clauses := []string{clause}
		j := i + 1
		for ; j < len(parts) && strings.HasPrefix(parts[j], "key "); j++ {
			clauses = append(clauses, parts[j])
		}
		slices.Sort(clauses)
		clauses[0] = prefix + clauses[0]
		out = append(out, clauses...)
		i = j
	}
	return strings.Join(out, "; ")
}

// keyClause splits a part that opens a run of requirement clauses into
// what comes before the first clause and the clause itself.
func keyClause(part string) (prefix, clause string, ok bool) {
	if strings.HasPrefix(part, "key ") {
		return "", part, true
	}
	i := strings.Index(part, requirementsPrefix+"key ")
	if i < 0 {
		return "", "", false
	}
	cut := i + len(requirementsPrefix)
	return part[:cut], part[cut:], true
}

// Canonical returns a copy of the result with CanonicalError applied to
// every pod error, for comparing results as outcomes.
func (r *Result) Canonical() *Result {
	c := *r
	c.Errors = make([]PodError, len(r.Errors))
	for i, e := range r.Errors {
		c.Errors[i] = PodError{Pod: e.Pod, Error: CanonicalError(e.Error)}
	}
	return &c
}
