// Package report builds `berth report --html`: one self-contained HTML page
// with the nodes by zone and group, the pending pods with their `berth why`
// summary, cost over virtual time and the event timeline (docs/report.md).
//
// Everything on the page comes from the other layers' APIs: internal/why
// for the reasons, internal/cost for the prices. Nothing here reads the
// wall clock, and every list is sorted, so the same state gives the same
// bytes.
package report

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/cost"
	"github.com/berth-sim/berth/internal/why"
)

// Options tune the page.
type Options struct {
	// NoFixes skips why's verified fixes (each re-runs the simulation).
	NoFixes bool
	// MaxExplained caps how many distinct pending pods get a full why
	// answer; the others are listed by name (0: DefaultMaxExplained).
	MaxExplained int
	// MaxEvents caps the timeline to the newest events (0: DefaultMaxEvents).
	MaxEvents int
}

// Defaults for Options, and the size from which nodes are drawn as
// compact tiles.
const (
	DefaultMaxExplained = 20
	DefaultMaxEvents    = 300
	// CompactFrom is the node count from which a node is a small tile
	// (bars and a pod count) instead of a card listing its pods.
	CompactFrom = 60
	// maxPodsListed is how many pods a card names before it counts them
	// by workload.
	maxPodsListed = 8
	// noZone heads the nodes without a zone label.
	noZone = "(no zone)"
)

// Page is everything the template shows.
type Page struct {
	Cluster    string
	Region     string
	Kubernetes string
	// Now is virtual time since the state began, e.g. "2h30m0s".
	Now     string
	Compact bool
	Summary Summary
	Zones   []Zone
	Pending []Pending
	// PendingNotExplained counts the pending pods beyond MaxExplained.
	PendingNotExplained int
	Cost                CostView
	Events              []Event
	EventsOmitted       int
}

// Summary is the headline numbers.
type Summary struct {
	Nodes, Zones, Groups int
	Running, Pending     int
	PerHour              string
	SinceStart           string
}

// Zone holds the nodes of one availability zone by group.
type Zone struct {
	Name   string
	Nodes  int
	Groups []Group
}

// Group is the nodes one node group, NodePool or Fargate profile brought
// in a zone.
type Group struct {
	Name  string
	Nodes []Node
}

// Node is one node's tile or card.
type Node struct {
	Name         string
	InstanceType string
	CapacityType string
	Price        string
	CPU, Memory  Bar
	PodCount     int
	// Pods are named while a node has few; Workloads count them by owner
	// otherwise.
	Pods      []string
	Workloads []Count
	Ready     bool
	Tainted   bool
}

// Bar is one utilisation bar: requests over allocatable.
type Bar struct {
	Percent int
	// Width is Percent capped at 100, for the CSS width.
	Width int
	Text  string
	Over  bool
}

// Count is a name with a number.
type Count struct {
	Name string
	N    int
}

// Pending is one pending pod and why's answer about it.
type Pending struct {
	Pod         string
	Workload    string
	AlsoPending []string
	// Reason is the scheduler's message (the FailedScheduling text).
	Reason string
	// Layers are one line per capacity layer verdict (Karpenter pools,
	// node groups, Fargate profiles).
	Layers []string
	Fixes  []string
	// Full is `berth why`'s text answer.
	Full string
}

// Event is one line of the timeline.
type Event struct {
	At      string
	Type    string
	Reason  string
	Object  string
	Message string
	Count   int32
}

// Build reads s into a Page. It never writes to s: why's answers are
// worked out on copies.
func Build(s *cluster.State, o Options) (*Page, error) {
	if o.MaxExplained <= 0 {
		o.MaxExplained = DefaultMaxExplained
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = DefaultMaxEvents
	}
	p := &Page{Cluster: s.Info.Name, Region: s.Info.Region, Kubernetes: s.Info.KubernetesVersion, Now: virtual(s, s.Now)}
	if p.Cluster == "" {
		p.Cluster = "berth"
	}
	lives := cost.Lives(s)
	p.Zones = zones(s, lives)
	p.Compact = len(s.Nodes) >= CompactFrom
	p.Pending, p.PendingNotExplained = pending(s, o)
	p.Cost = costView(s, lives)
	p.Events, p.EventsOmitted = events(s, o.MaxEvents)
	groups := map[string]bool{}
	for _, z := range p.Zones {
		for _, g := range z.Groups {
			groups[g.Name] = true
		}
	}
	p.Summary = Summary{Nodes: len(s.Nodes), Zones: len(p.Zones), Groups: len(groups),
		PerHour: p.Cost.PerHour, SinceStart: p.Cost.Total}
	for _, k := range cluster.SortedKeys(s.Pods) {
		pod := s.Pods[k]
		switch {
		case cluster.IsTerminal(pod):
		case pod.Spec.NodeName != "":
			p.Summary.Running++
		case pod.DeletionTimestamp == nil:
			p.Summary.Pending++
		}
	}
	return p, nil
}

// virtual writes a virtual time as the time since the state began.
func virtual(s *cluster.State, t time.Time) string {
	d := t.Sub(cluster.Epoch)
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}

// zones lays the live nodes out by zone, then group, then name.
func zones(s *cluster.State, lives []cost.Life) []Zone {
	byNode := map[string]cost.Life{}
	for _, l := range lives {
		if l.Live {
			byNode[l.Name] = l
		}
	}
	pods := map[string][]*corev1.Pod{}
	for _, k := range cluster.SortedKeys(s.Pods) {
		if pod := s.Pods[k]; pod.Spec.NodeName != "" && !cluster.IsTerminal(pod) {
			pods[pod.Spec.NodeName] = append(pods[pod.Spec.NodeName], pod)
		}
	}
	type key struct{ zone, group string }
	grouped := map[key][]Node{}
	for _, name := range cluster.SortedKeys(s.Nodes) {
		n := s.Nodes[name]
		zone := n.Labels[corev1.LabelTopologyZone]
		if zone == "" {
			zone = noZone
		}
		l := byNode[name]
		group := l.Group
		if group == "" {
			group = cost.NoGroup
		}
		k := key{zone, group}
		grouped[k] = append(grouped[k], node(s, n, l.Price, pods[name]))
	}
	keys := make([]key, 0, len(grouped))
	for k := range grouped {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].zone != keys[j].zone {
			// Nodes without a zone come last.
			if (keys[i].zone == noZone) != (keys[j].zone == noZone) {
				return keys[j].zone == noZone
			}
			return keys[i].zone < keys[j].zone
		}
		return keys[i].group < keys[j].group
	})
	var out []Zone
	for _, k := range keys {
		if len(out) == 0 || out[len(out)-1].Name != k.zone {
			out = append(out, Zone{Name: k.zone})
		}
		z := &out[len(out)-1]
		z.Groups = append(z.Groups, Group{Name: k.group, Nodes: grouped[k]})
		z.Nodes += len(grouped[k])
	}
	return out
}

func node(s *cluster.State, n *corev1.Node, price cost.Price, pods []*corev1.Pod) Node {
	out := Node{Name: n.Name, InstanceType: n.Labels[corev1.LabelInstanceTypeStable], CapacityType: price.CapacityType,
		PodCount: len(pods), Tainted: len(n.Spec.Taints) > 0 || n.Spec.Unschedulable}
	if out.InstanceType == "" {
		out.InstanceType = "-"
	}
	out.Price = "unknown"
	if price.Known {
		out.Price = fmt.Sprintf("$%.4f/h", price.PerHour)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			out.Ready = true
		}
	}
	var cpu, mem int64
	workloads := map[string]int{}
	for _, pod := range pods {
		req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		cpu += req.Cpu().MilliValue()
		mem += req.Memory().Value()
		workloads[cost.WorkloadOf(s, pod)]++
	}
	alloc := n.Status.Allocatable
	out.CPU = bar(cpu, alloc.Cpu().MilliValue(), fmt.Sprintf("%dm / %dm", cpu, alloc.Cpu().MilliValue()))
	out.Memory = bar(mem, alloc.Memory().Value(), fmt.Sprintf("%s / %s", mib(mem), mib(alloc.Memory().Value())))
	if len(pods) <= maxPodsListed {
		for _, pod := range pods {
			out.Pods = append(out.Pods, cluster.Key(pod.Namespace, pod.Name))
		}
		return out
	}
	for _, name := range cluster.SortedKeys(workloads) {
		out.Workloads = append(out.Workloads, Count{Name: name, N: workloads[name]})
	}
	// Biggest workloads first; names break ties so the order is stable.
	sort.SliceStable(out.Workloads, func(i, j int) bool { return out.Workloads[i].N > out.Workloads[j].N })
	return out
}

func bar(used, alloc int64, text string) Bar {
	b := Bar{Text: text}
	if alloc > 0 {
		b.Percent = int(used * 100 / alloc)
	} else if used > 0 {
		b.Percent = 100
	}
	b.Width = min(b.Percent, 100)
	b.Over = b.Percent > 100
	return b
}

func mib(bytes int64) string { return fmt.Sprintf("%dMi", bytes/(1<<20)) }

// pending asks why about the pending pods: the first of each workload and
// spec in full (why.Workload's grouping), the others named beside it.
func pending(s *cluster.State, o Options) ([]Pending, int) {
	var out []Pending
	seen := map[string]int{}
	notExplained := 0
	for _, k := range cluster.SortedKeys(s.Pods) {
		pod := s.Pods[k]
		if pod.Spec.NodeName != "" || cluster.IsTerminal(pod) || pod.DeletionTimestamp != nil {
			continue
		}
		wl := cost.WorkloadOf(s, pod)
		sig := pod.Namespace + "/" + wl
		if !strings.HasPrefix(wl, "pod/") {
			if i, ok := seen[sig]; ok {
				out[i].AlsoPending = append(out[i].AlsoPending, pod.Name)
				continue
			}
		}
		if len(out) >= o.MaxExplained {
			notExplained++
			continue
		}
		seen[sig] = len(out)
		r, err := why.Pod(s, pod, why.Options{NoFixes: o.NoFixes})
		if err != nil {
			// One pod why cannot answer about must not cost the whole
			// page: the entry says so (docs/report.md#choices).
			out = append(out, Pending{Pod: k, Workload: wl, Reason: "berth why could not answer: " + err.Error()})
			continue
		}
		out = append(out, explain(r, wl))
	}
	return out, notExplained
}

// explain turns why's answer into the page's summary lines; the full text
// is why.Render's, unchanged.
func explain(r *why.Report, workload string) Pending {
	p := Pending{Pod: r.Pod, Workload: workload, Reason: r.LastFailedScheduling}
	if l := r.SchedulerLayer; l != nil && l.Message != "" && (p.Reason == "" || l.Stale) {
		p.Reason = l.Message
	}
	if p.Reason == "" && r.Scheduler != "default-scheduler" {
		p.Reason = "waiting for " + r.Scheduler
	}
	for _, v := range r.Karpenter {
		line := fmt.Sprintf("%s %s: %s", v.Kind, v.Pool, v.Outcome)
		if v.Outcome == "launch" && len(v.InstanceTypes) > 0 {
			line += " (" + strings.Join(v.InstanceTypes, ", ") + ")"
		}
		if v.Message != "" {
			line += ": " + v.Message
		}
		p.Layers = append(p.Layers, line)
	}
	for _, v := range r.NodeGroups {
		p.Layers = append(p.Layers, fmt.Sprintf("node group %s: %s: %s", v.Group, v.Outcome, v.Message))
	}
	for _, v := range r.Fargate {
		line := "Fargate profile " + v.Profile + ": " + v.Outcome
		if v.Message != "" {
			line += ": " + v.Message
		}
		p.Layers = append(p.Layers, line)
	}
	for _, f := range r.Fixes {
		p.Fixes = append(p.Fixes, f.Change+" → "+f.LandsOn)
	}
	var b bytes.Buffer
	why.Render(&b, []*why.Report{r})
	p.Full = b.String()
	return p
}

// events lists the newest max events oldest first, in kubectl's order.
func events(s *cluster.State, max int) ([]Event, int) {
	evs := append([]*corev1.Event(nil), s.Events...)
	sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).Before(eventTime(evs[j])) })
	omitted := 0
	if len(evs) > max {
		omitted = len(evs) - max
		evs = evs[omitted:]
	}
	out := make([]Event, 0, len(evs))
	for _, e := range evs {
		obj := strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name
		if e.InvolvedObject.Namespace != "" {
			obj = e.InvolvedObject.Namespace + "/" + obj
		}
		count := e.Count
		if e.Series != nil {
			count = e.Series.Count
		}
		out = append(out, Event{At: virtual(s, eventTime(e)), Type: e.Type, Reason: e.Reason, Object: obj,
			Message: e.Message, Count: max32(count, 1)})
	}
	return out, omitted
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

// eventTime is when an event was last seen (kubectl's sort key).
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}
