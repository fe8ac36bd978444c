//go:build genuine

package genuine

import (
	"encoding/json"
	"fmt"

	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// byClass renames every pending pod in r to its class: pods that differ
// only by name are interchangeable to cluster-autoscaler (one equivalence
// group), and which of them a scale-up names varies from run to run in the
// genuine autoscaler, so results are compared as multisets of classes.
func byClass(sc *scenario.Scenario, r *scenario.Result) *scenario.Result {
	cls := map[string]string{}
	ids := map[string]int{}
	for _, p := range sc.Pods {
		q := p
		q.Name = ""
		b, _ := json.Marshal(q)
		id, ok := ids[string(b)]
		if !ok {
			id = len(ids)
			ids[string(b)] = id
		}
	}
	// Every member of a class gets the same name, the class id.
	for _, p := range sc.Pods {
		q := p
		q.Name = ""
		b, _ := json.Marshal(q)
		cls[p.Name] = fmt.Sprintf("class-%d", ids[string(b)])
	}
	rename := func(l []string) []string {
		if l == nil {
			return nil
		}
		out := make([]string, 0, len(l))
		for _, n := range l {
			out = append(out, cls[n])
		}
		return out
	}
	renameMap := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := map[string]string{}
		for k, v := range m {
			out[cls[k]] = v
		}
		return out
	}
	c := *r
	c.Triggered, c.Remaining, c.Awaiting = rename(r.Triggered), rename(r.Remaining), rename(r.Awaiting)
	c.Options = nil
	for _, o := range r.Options {
		c.Options = append(c.Options, scenario.Option{Group: o.Group, Nodes: o.Nodes, Pods: rename(o.Pods)})
	}
	if r.Options == nil {
		c.Options = nil
	}
	c.NotTriggerScaleUp = renameMap(r.NotTriggerScaleUp)
	c.TriggeredScaleUp = renameMap(r.TriggeredScaleUp)
	return &c
}
