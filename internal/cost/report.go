package cost

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berth-sim/berth/internal/capacity/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/fargate"
	"github.com/berth-sim/berth/internal/karpenter/apis/v1alpha5"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// Roll-ups `berth cost --by` knows.
const (
	ByNode      = "node"
	ByNodeGroup = "nodegroup"
	ByNamespace = "namespace"
	ByWorkload  = "workload"
)

// Rows that are not a namespace or workload of their own.
const (
	IdleRow    = "<idle>"
	DeletedRow = "<deleted nodes>"
	NoGroup    = "<none>"
)

// Options say how to roll the cluster's cost up.
type Options struct {
	By string
	// Since, when Window is set, starts the window that long before now;
	// 0 means since the state began (virtual time 0).
	Since  time.Duration
	Window bool
}

// Report is what `berth cost` prints.
type Report struct {
	By  string
	Now time.Time
	// WindowStart is set when a window was asked for.
	WindowStart *time.Time
	Rows        []Row
	Total       Row
	// Unpriced are the nodes (live, or lived in the window) without a
	// known price, by name, with the reason.
	Unpriced []Unpriced
}

// Unpriced is a node berth cannot price.
type Unpriced struct {
	Node   string
	Reason string
}

// Row is one line of a roll-up. Amounts only ever add known prices; the
// Unknown counters say how many nodes (node and group rows) or pods
// (namespace and workload rows) left something out.
type Row struct {
	Name string
	// Namespace is the workload's namespace (--by workload).
	Namespace    string
	Group        string
	InstanceType string
	Zone         string
	CapacityType string
	// Until is when a deleted node ended; nil while it lives.
	Until *time.Time
	Nodes int
	Pods  int
	// PerHour is what the row costs per hour now (live nodes only);
	// Hours are node-hours in the window (node and group rows); Cost is
	// the window's dollars.
	PerHour     float64
	Hours       float64
	Cost        float64
	Unknown     int
	PriceSource string
}

// Known reports whether the row's amounts are complete.
func (r Row) Known() bool { return r.Unknown == 0 }

// life is one node's life: a live node, or a ledger record.
type life struct {
	name        string
	labels      map[string]string
	group       string
	allocatable corev1.ResourceList
	start, end  time.Time
	live        bool
	price       Price
	node        *corev1.Node
}

// Build rolls the state's cost up as o asks. It only reads s.
func Build(s *cluster.State, o Options) (*Report, error) {
	switch o.By {
	case "":
		o.By = ByNode
	case ByNode, ByNodeGroup, ByNamespace, ByWorkload:
	default:
		return nil, fmt.Errorf("--by %q: want node, nodegroup, namespace or workload", o.By)
	}
	if o.Since < 0 {
		return nil, fmt.Errorf("--since %s is negative", o.Since)
	}
	r := &Report{By: o.By, Now: s.Now}
	start := s.Now
	if o.Window {
		start = cluster.Epoch
		if o.Since > 0 && s.Now.Add(-o.Since).After(start) {
			start = s.Now.Add(-o.Since)
		}
		r.WindowStart = &start
	}
	lives := nodeLives(s, NewPricer(s))
	pods := podsByNode(s)
	for _, l := range lives {
		if !l.live && (!o.Window || !l.end.After(start)) {
			continue
		}
		if !l.price.Known {
			r.Unpriced = append(r.Unpriced, Unpriced{Node: l.name, Reason: l.price.Source})
		}
	}
	switch o.By {
	case ByNode:
		r.Rows = nodeRows(pods, lives, start, o.Window)
	case ByNodeGroup:
		r.Rows = groupRows(lives, start, o.Window)
	default:
		r.Rows = podRows(s, pods, lives, start, o.Window, o.By == ByWorkload)
	}
	r.Total = Row{Name: "TOTAL"}
	for _, l := range lives {
		hours := overlapHours(l.start, l.end, start, s.Now)
		if !l.live && hours == 0 {
			continue
		}
		if l.live {
			r.Total.Nodes++
		}
		r.Total.Hours += hours
		if !l.price.Known {
			r.Total.Unknown++
			continue
		}
		if l.live {
			r.Total.PerHour += l.price.PerHour
		}
		r.Total.Cost += l.price.PerHour * hours
	}
	for _, row := range r.Rows {
		r.Total.Pods += row.Pods
	}
	return r, nil
}

// podsByNode is State.PodsOnNode for every node in one pass: the bound,
// non-terminal pods by node, in key order.
func podsByNode(s *cluster.State) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, k := range cluster.SortedKeys(s.Pods) {
		if p := s.Pods[k]; p.Spec.NodeName != "" && !cluster.IsTerminal(p) {
			out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p)
		}
	}
	return out
}

// nodeLives lists the ledger's deleted nodes in the order they ended, then
// the live nodes by name.
func nodeLives(s *cluster.State, p *Pricer) []*life {
	var out []*life
	for _, rec := range s.NodeLedger {
		l := &life{name: rec.Name, labels: rec.Labels, allocatable: rec.Allocatable, start: rec.Start, end: rec.End,
			price: p.price(rec.Labels, rec.ProviderID, rec.Capacity)}
		l.group = groupOf(rec.Labels, rec.FargateProfile)
		out = append(out, l)
	}
	profiles := map[string]string{}
	for _, uid := range cluster.SortedKeys(s.Fargate.Pods) {
		if rec := s.Fargate.Pods[uid]; rec.Node != "" {
			profiles[rec.Node] = rec.Profile
		}
	}
	for _, name := range cluster.SortedKeys(s.Nodes) {
		n := s.Nodes[name]
		start := n.CreationTimestamp.Time
		if start.IsZero() || start.After(s.Now) {
			start = s.Now
		}
		out = append(out, &life{name: name, labels: n.Labels, allocatable: n.Status.Allocatable, start: start, end: s.Now,
			live: true, price: p.NodePrice(n), node: n, group: groupOf(n.Labels, profiles[name])})
	}
	return out
}

// groupOf names what brought the node: a NodePool (or legacy Provisioner),
// an eksctl node group or a Fargate profile.
func groupOf(labels map[string]string, fargateProfile string) string {
	switch {
	case labels[scheduling.NodePoolLabelKey] != "":
		return "nodepool/" + labels[scheduling.NodePoolLabelKey]
	case labels[v1alpha5.ProvisionerNameLabelKey] != "":
		return "provisioner/" + labels[v1alpha5.ProvisionerNameLabelKey]
	case labels[nodegroups.LabelNodeGroup] != "":
		return "nodegroup/" + labels[nodegroups.LabelNodeGroup]
	case labels[nodegroups.LabelEksctlNodeGroupName] != "":
		return "nodegroup/" + labels[nodegroups.LabelEksctlNodeGroupName]
	case labels[fargate.LabelComputeType] == fargate.ComputeTypeFargate && fargateProfile != "":
		return "fargateprofile/" + fargateProfile
	}
	return NoGroup
}

// overlapHours is how many hours [from, to) and [wstart, wend) share.
func overlapHours(from, to, wstart, wend time.Time) float64 {
	if from.Before(wstart) {
		from = wstart
	}
	if to.After(wend) {
		to = wend
	}
	if !to.After(from) {
		return 0
	}
	return to.Sub(from).Hours()
}

func nodeRows(pods map[string][]*corev1.Pod, lives []*life, start time.Time, window bool) []Row {
	var rows []Row
	for _, l := range lives {
		hours := overlapHours(l.start, l.end, start, l.end)
		if !l.live && (!window || hours == 0) {
			continue
		}
		row := Row{Name: l.name, Group: l.group, InstanceType: l.labels[corev1.LabelInstanceTypeStable],
			Zone: l.labels[corev1.LabelTopologyZone], CapacityType: l.price.CapacityType,
			Hours: hours, PriceSource: l.price.Source}
		if l.live {
			row.Nodes = 1
		} else {
			end := l.end
			row.Until = &end
		}
		if l.live {
			row.Pods = len(pods[l.name])
		}
		switch {
		case !l.price.Known:
			row.Unknown = 1
		default:
			row.PerHour = l.price.PerHour
			row.Cost = l.price.PerHour * hours
		}
		rows = append(rows, row)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows
}

func groupRows(lives []*life, start time.Time, window bool) []Row {
	byGroup := map[string]*Row{}
	for _, l := range lives {
		hours := overlapHours(l.start, l.end, start, l.end)
		if !l.live && (!window || hours == 0) {
			continue
		}
		row := byGroup[l.group]
		if row == nil {
			row = &Row{Name: l.group}
			byGroup[l.group] = row
		}
		if l.live {
			row.Nodes++
		}
		row.Hours += hours
		if !l.price.Known {
			row.Unknown++
			continue
		}
		if l.live {
			row.PerHour += l.price.PerHour
		}
		row.Cost += l.price.PerHour * hours
	}
	var rows []Row
	for _, name := range cluster.SortedKeys(byGroup) {
		rows = append(rows, *byGroup[name])
	}
	return rows
}

// Share is a pod's share of its node: the mean of its cpu and memory
// requests over the node's allocatable, 1 on a Fargate node, which is the
// pod's own (docs/cost.md#a-pods-share).
func Share(pod *corev1.Pod, node *corev1.Node) float64 {
	if fargate.IsFargateNode(node) {
		return 1
	}
	return shareOf(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}), node.Status.Allocatable)
}

func shareOf(req, alloc corev1.ResourceList) float64 {
	frac := func(name corev1.ResourceName) float64 {
		a, ok := alloc[name]
		if !ok || a.IsZero() {
			return 0
		}
		q := req[name]
		f := float64(q.MilliValue()) / float64(a.MilliValue())
		if f > 1 {
			f = 1
		}
		return f
	}
	return (frac(corev1.ResourceCPU) + frac(corev1.ResourceMemory)) / 2
}

// podRows rolls pods up by namespace or workload, plus the idle rest of
// live nodes and, in a window, the nodes that are gone.
func podRows(s *cluster.State, pods map[string][]*corev1.Pod, lives []*life, start time.Time, window, byWorkload bool) []Row {
	byKey := map[string]*Row{}
	get := func(ns, name string) *Row {
		key := ns + "\x00" + name
		row := byKey[key]
		if row == nil {
			row = &Row{Name: name, Namespace: ns}
			byKey[key] = row
		}
		return row
	}
	for _, l := range lives {
		nodeHours := overlapHours(l.start, l.end, start, l.end)
		if !l.live {
			if window && nodeHours > 0 {
				row := get("", DeletedRow)
				if l.price.Known {
					row.Cost += l.price.PerHour * nodeHours
				} else {
					row.Unknown++
				}
			}
			continue
		}
		idleShare, idleCost := 1.0, l.price.PerHour*nodeHours
		for _, pod := range pods[l.name] {
			share := Share(pod, l.node)
			ns, name := pod.Namespace, pod.Namespace
			if byWorkload {
				name = workloadOf(s, pod)
			} else {
				ns = ""
			}
			row := get(ns, name)
			row.Pods++
			if !l.price.Known {
				row.Unknown++
				continue
			}
			hours := overlapHours(podStart(pod, l.start), l.end, start, l.end)
			row.PerHour += share * l.price.PerHour
			row.Cost += share * l.price.PerHour * hours
			idleShare -= share
			idleCost -= share * l.price.PerHour * hours
		}
		row := get("", IdleRow)
		if !l.price.Known {
			row.Unknown++
			continue
		}
		if idleShare < 0 {
			idleShare = 0
		}
		if idleCost < 0 {
			idleCost = 0
		}
		row.PerHour += idleShare * l.price.PerHour
		row.Cost += idleCost
	}
	var rows, tail []Row
	for _, key := range cluster.SortedKeys(byKey) {
		row := *byKey[key]
		if row.Name == IdleRow || row.Name == DeletedRow {
			tail = append(tail, row)
			continue
		}
		if !byWorkload {
			row.Name, row.Namespace = key[1:], ""
		}
		rows = append(rows, row)
	}
	sort.SliceStable(tail, func(i, j int) bool { return tail[i].Name > tail[j].Name })
	return append(rows, tail...)
}

// podStart is when the pod began to occupy its node: the kubelet's start
// time, else its creation, never before the node.
func podStart(pod *corev1.Pod, nodeStart time.Time) time.Time {
	t := pod.CreationTimestamp.Time
	if pod.Status.StartTime != nil {
		t = pod.Status.StartTime.Time
	}
	if t.Before(nodeStart) {
		return nodeStart
	}
	return t
}

// workloadOf names the pod's owning workload as kubectl would write it:
// deployment/NAME through its ReplicaSet, statefulset/, daemonset/, job/,
// replicaset/ for a ReplicaSet of its own, pod/NAME for a bare pod.
func workloadOf(s *cluster.State, pod *corev1.Pod) string {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return "pod/" + pod.Name
	}
	if ref.Kind == "ReplicaSet" {
		if rs, ok := s.ReplicaSets[cluster.Key(pod.Namespace, ref.Name)]; ok {
			if dref := metav1.GetControllerOf(rs); dref != nil && dref.Kind == "Deployment" {
				return "deployment/" + dref.Name
			}
		}
	}
	return strings.ToLower(ref.Kind) + "/" + ref.Name
}
