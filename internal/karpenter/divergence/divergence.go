// Package divergence reports, as berth's own events, where Karpenter's plan
// and kube-scheduler's bindings part ways: Karpenter nominates pending pods
// for the NodeClaims it creates (and for existing nodes), but
// kube-scheduler binds each pod wherever it fits first. A pod nominated
// for one place and bound to another gets NominationDiverged on the
// NodeClaim; a NodeClaim whose node came up Initialized and stayed without
// workload pods while the pods it was launched for ran elsewhere gets
// LaunchedNodeUnused. Each is reported once. See
// docs/karpenter-interruption.md#plan-and-binding.
package divergence

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/podutil"
)

// Name is the controller's name.
const Name = "berth-divergence"

// Reasons of the events berth publishes.
const (
	ReasonNominationDiverged = "NominationDiverged"
	ReasonLaunchedNodeUnused = "LaunchedNodeUnused"
)

// nominatedPrefix starts Karpenter's Nominated event message.
const nominatedPrefix = "Pod should schedule on: "

var source = cluster.EventSource{Component: "berth", Plain: true}

// Nomination is Karpenter's latest nomination of one pod.
type Nomination struct {
	Pod       *corev1.Pod
	NodeClaim string // may be empty for an existing node without a claim
	Node      string // set when an existing node was nominated
}

// Nominations lists, per live pod, Karpenter's latest Nominated event,
// sorted by pod namespace/name. A pod recreated under the same name is
// not matched to its predecessor's nominations (uids differ).
func Nominations(s *cluster.State) []Nomination {
	type entry struct {
		n    Nomination
		last time.Time
	}
	latest := map[string]entry{}
	for _, e := range s.Events {
		if e.Reason != "Nominated" || e.Source.Component != "karpenter" || e.InvolvedObject.Kind != "Pod" ||
			!strings.HasPrefix(e.Message, nominatedPrefix) {
			continue
		}
		key := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		p := s.Pods[key]
		if p == nil || p.UID != e.InvolvedObject.UID {
			continue
		}
		n := Nomination{Pod: p}
		for _, part := range strings.Split(strings.TrimPrefix(e.Message, nominatedPrefix), ", ") {
			if v, ok := strings.CutPrefix(part, "nodeclaim/"); ok {
				n.NodeClaim = v
			} else if v, ok := strings.CutPrefix(part, "node/"); ok {
				n.Node = v
			}
		}
		// A repeat of an earlier message is counted on that event, which
		// keeps its place in the log: the last timestamp says which
		// nomination is newest; ties go to the later event.
		if cur, ok := latest[key]; ok && e.LastTimestamp.Time.Before(cur.last) {
			continue
		}
		latest[key] = entry{n: n, last: e.LastTimestamp.Time}
	}
	keys := make([]string, 0, len(latest))
	for k := range latest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Nomination, 0, len(keys))
	for _, k := range keys {
		out = append(out, latest[k].n)
	}
	return out
}

// Target is the node the nomination meant, "" while the claim has none.
func (n Nomination) Target(s *cluster.State) string {
	if n.Node != "" {
		return n.Node
	}
	if nc := s.NodeClaims[n.NodeClaim]; nc != nil {
		return nc.Status.NodeName
	}
	return ""
}

// Diverged reports whether the pod is bound somewhere other than where it
// was nominated (for a claim without a node yet: bound at all).
func (n Nomination) Diverged(s *cluster.State) bool {
	if n.Pod.Spec.NodeName == "" {
		return false
	}
	return n.Pod.Spec.NodeName != n.Target(s)
}

// Controller implements sim.Controller.
type Controller struct{ seen int64 }

// New returns the divergence reporter.
func New() *Controller { return &Controller{seen: -1} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync implements sim.Controller. It only reads unless it reports.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	if len(s.NodeClaims) == 0 || s.ResourceVersion == c.seen {
		return false, nil
	}
	changed := prune(s)
	noms := Nominations(s)
	byClaim := map[string][]Nomination{}
	for _, n := range noms {
		nc := s.NodeClaims[n.NodeClaim]
		if nc == nil {
			continue
		}
		byClaim[nc.Name] = append(byClaim[nc.Name], n)
		if !n.Diverged(s) {
			continue
		}
		msg := fmt.Sprintf("Karpenter nominated pod %s/%s for nodeclaim/%s; kube-scheduler bound it to node/%s before the NodeClaim's node registered",
			n.Pod.Namespace, n.Pod.Name, nc.Name, n.Pod.Spec.NodeName)
		if t := n.Target(s); t != "" {
			msg = fmt.Sprintf("Karpenter nominated pod %s/%s for nodeclaim/%s (node/%s); kube-scheduler bound it to node/%s",
				n.Pod.Namespace, n.Pod.Name, nc.Name, t, n.Pod.Spec.NodeName)
		}
		changed = report(s, nc, ReasonNominationDiverged, "nominated/"+string(n.Pod.UID)+"/"+string(nc.UID), msg) || changed
	}
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[name]
		if list := byClaim[name]; len(list) > 0 && unused(s, nc, list) {
			var elsewhere []string
			for _, n := range list {
				if n.Diverged(s) {
					elsewhere = append(elsewhere, fmt.Sprintf("%s/%s on node/%s", n.Pod.Namespace, n.Pod.Name, n.Pod.Spec.NodeName))
				}
			}
			msg := fmt.Sprintf("NodeClaim %s launched node/%s for %d nominated pod(s); kube-scheduler bound them elsewhere (%s) and the node runs no workload pods",
				nc.Name, nc.Status.NodeName, len(list), strings.Join(elsewhere, ", "))
			changed = report(s, nc, ReasonLaunchedNodeUnused, "unused/"+string(nc.UID), msg) || changed
		}
	}
	c.seen = s.ResourceVersion
	return changed, nil
}

// unused: the claim's node is Initialized and runs no pods but DaemonSet
// and mirror pods, none of its nominated pods is still pending, and at
// least one runs elsewhere.
func unused(s *cluster.State, nc *karpv1.NodeClaim, list []Nomination) bool {
	if nc.DeletionTimestamp != nil || nc.Status.NodeName == "" || !initialized(nc) {
		return false
	}
	if _, ok := s.Nodes[nc.Status.NodeName]; !ok {
		return false
	}
	elsewhere := false
	for _, n := range list {
		switch {
		case n.Pod.Spec.NodeName == "":
			return false
		case n.Diverged(s):
			elsewhere = true
		}
	}
	if !elsewhere {
		return false
	}
	for _, p := range s.PodsOnNode(nc.Status.NodeName) {
		if !cluster.IsTerminal(p) && !podutil.OwnedByDaemonSet(p) && !podutil.OwnedByNode(p) {
			return false
		}
	}
	return true
}

func initialized(nc *karpv1.NodeClaim) bool {
	for _, c := range nc.Status.Conditions {
		if c.Type == "Initialized" {
			return c.Status == "True"
		}
	}
	return false
}

// report publishes the event once per key; it reports whether it did.
func report(s *cluster.State, nc *karpv1.NodeClaim, reason, key, msg string) bool {
	aws := s.Karpenter.AWSState()
	if slices.Contains(aws.Reported, key) {
		return false
	}
	aws.Reported = append(aws.Reported, key)
	s.Record(source, cluster.Regarding("NodeClaim", karpv1.SchemeGroupVersion.String(), nc), corev1.EventTypeNormal, reason, msg)
	return true
}

// prune forgets reports about NodeClaims that are gone (keys end in the
// claim's uid), so the state does not grow without bound.
func prune(s *cluster.State) bool {
	aws := s.Karpenter.AWS
	if aws == nil || len(aws.Reported) == 0 {
		return false
	}
	live := map[string]bool{}
	for _, nc := range s.NodeClaims {
		live[string(nc.UID)] = true
	}
	n := len(aws.Reported)
	aws.Reported = slices.DeleteFunc(aws.Reported, func(k string) bool { return !live[k[strings.LastIndex(k, "/")+1:]] })
	return len(aws.Reported) != n
}
