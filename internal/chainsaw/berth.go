package chainsaw

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/cost"
)

// BerthOp is berth's extension operation: checks a real cluster has no
// resource for (docs/berth-test.md#berth-extension). Every check set must
// hold; like assert, the operation advances virtual time until they do or
// its timeout (default: the assert timeout) has passed.
type BerthOp struct {
	Timeout *Duration `json:"timeout,omitempty"`
	// Nodes are live node counts per NodePool or node group.
	Nodes []NodeCount `json:"nodes,omitempty"`
	// Event asks for an event with this reason whose message contains
	// the given text.
	Event *EventCheck `json:"event,omitempty"`
	// MaxCostPerHour bounds the cluster's cost per hour now, in dollars,
	// as `berth cost` prices it; a node of unknown price fails the check.
	MaxCostPerHour *float64 `json:"maxCostPerHour,omitempty"`
}

// NodeCount is the number of live nodes one NodePool (or v1alpha5
// Provisioner of that name) or node group has.
type NodeCount struct {
	NodePool  string `json:"nodePool,omitempty"`
	NodeGroup string `json:"nodeGroup,omitempty"`
	Count     int    `json:"count"`
}

// EventCheck selects events.
type EventCheck struct {
	Reason string `json:"reason"`
	// Object is "kind/name" of the involved object (kind case-insensitive,
	// "pod/web-0"); empty matches any. Its namespace is the test's unless
	// Namespace says otherwise.
	Object    string `json:"object,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Message is a substring the event's message must contain.
	Message string `json:"message,omitempty"`
}

func (r *runner) berth(op *BerthOp, timeout time.Duration) error {
	if len(op.Nodes) == 0 && op.Event == nil && op.MaxCostPerHour == nil {
		return fmt.Errorf("berth: set nodes, event or maxCostPerHour")
	}
	for _, n := range op.Nodes {
		if (n.NodePool == "") == (n.NodeGroup == "") {
			return fmt.Errorf("nodes: set exactly one of nodePool and nodeGroup")
		}
	}
	if op.Event != nil && op.Event.Reason == "" {
		return fmt.Errorf("event: reason is required")
	}
	return r.poll(timeout, func(s *cluster.State) (string, error) {
		var fails []string
		if len(op.Nodes) > 0 || op.MaxCostPerHour != nil {
			rep, err := cost.Build(s, cost.Options{By: cost.ByNodeGroup})
			if err != nil {
				return "", err
			}
			fails = append(fails, checkNodes(rep, op.Nodes)...)
			if op.MaxCostPerHour != nil {
				fails = append(fails, checkCost(rep, *op.MaxCostPerHour)...)
			}
		}
		if op.Event != nil {
			if msg := checkEvent(s, op.Event, r.namespace()); msg != "" {
				fails = append(fails, msg)
			}
		}
		if len(fails) > 1 {
			// one check per line under the operation
			return "\n  " + strings.ReplaceAll(strings.Join(fails, "\n"), "\n", "\n  "), nil
		}
		return strings.Join(fails, "\n"), nil
	})
}

// checkNodes compares live node counts; groups are named as `berth cost
// --by nodegroup` names them.
func checkNodes(rep *cost.Report, want []NodeCount) []string {
	have := map[string]int{}
	for _, row := range rep.Rows {
		have[row.Name] = row.Nodes
	}
	var fails []string
	for _, n := range want {
		key, got := "nodegroup/"+n.NodeGroup, have["nodegroup/"+n.NodeGroup]
		if n.NodePool != "" {
			// A legacy v1alpha5 Provisioner is the NodePool of its era.
			key, got = "nodepool/"+n.NodePool, have["nodepool/"+n.NodePool]+have["provisioner/"+n.NodePool]
		}
		if got != n.Count {
			fails = append(fails, fmt.Sprintf("nodes of %s: expected %d, got %d%s", key, n.Count, got, others(have)))
		}
	}
	return fails
}

// others lists every group's count, so that a miss shows where nodes are.
func others(have map[string]int) string {
	if len(have) == 0 {
		return " (no nodes)"
	}
	var parts []string
	for _, k := range cluster.SortedKeys(have) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, have[k]))
	}
	return " (live: " + strings.Join(parts, ", ") + ")"
}

func checkCost(rep *cost.Report, max float64) []string {
	if rep.Total.Unknown > 0 {
		return []string{fmt.Sprintf("cost per hour: %d node(s) have no known price", rep.Total.Unknown)}
	}
	if rep.Total.PerHour > max {
		return []string{fmt.Sprintf("cost per hour: expected at most $%.4f, got $%.4f", max, rep.Total.PerHour)}
	}
	return nil
}

// checkEvent passes when some event matches; otherwise it lists the
// events of that reason berth did record.
func checkEvent(s *cluster.State, c *EventCheck, testNS string) string {
	kind, name, _ := strings.Cut(c.Object, "/")
	ns := c.Namespace
	if ns == "" {
		ns = testNS
	}
	var seen []string
	for _, obj := range cluster.EventKind.List(s) {
		e, ok := obj.(*corev1.Event)
		if !ok || e.Reason != c.Reason {
			continue
		}
		if c.Object != "" {
			io := e.InvolvedObject
			if !strings.EqualFold(io.Kind, kind) || io.Name != name || (io.Namespace != "" && io.Namespace != ns) {
				continue
			}
		}
		if strings.Contains(e.Message, c.Message) {
			return ""
		}
		seen = append(seen, fmt.Sprintf("    %s/%s: %q", strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, e.Message))
	}
	want := fmt.Sprintf("event %s", c.Reason)
	if c.Object != "" {
		want += " on " + c.Object
	}
	if c.Message != "" {
		want += fmt.Sprintf(" with message containing %q", c.Message)
	}
	if len(seen) == 0 {
		return want + ": no such event"
	}
	sort.Strings(seen)
	return want + ": not found; events of that reason:\n" + strings.Join(seen, "\n")
}
