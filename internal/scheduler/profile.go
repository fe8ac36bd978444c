// Package scheduler is berth's kube-scheduler: a sim.Controller that places
// pending pods of one schedulerName through a profile of plugins, with
// upstream's cycle (PreFilter, Filter, PostFilter, PreScore, Score), queue
// order, backoff, events and FailedScheduling messages.
package scheduler

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/defaultpreemption"
	"github.com/berth-sim/berth/internal/scheduler/plugins/dynamicresources"
	"github.com/berth-sim/berth/internal/scheduler/plugins/imagelocality"
	"github.com/berth-sim/berth/internal/scheduler/plugins/interpodaffinity"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodeaffinity"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodename"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodeports"
	"github.com/berth-sim/berth/internal/scheduler/plugins/noderesources"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodeunschedulable"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodevolumelimits"
	"github.com/berth-sim/berth/internal/scheduler/plugins/podtopologyspread"
	"github.com/berth-sim/berth/internal/scheduler/plugins/queuesort"
	"github.com/berth-sim/berth/internal/scheduler/plugins/schedulinggates"
	"github.com/berth-sim/berth/internal/scheduler/plugins/tainttoleration"
	"github.com/berth-sim/berth/internal/scheduler/plugins/volumebinding"
	"github.com/berth-sim/berth/internal/scheduler/plugins/volumerestrictions"
	"github.com/berth-sim/berth/internal/scheduler/plugins/volumezone"
	"github.com/berth-sim/berth/internal/version"
)

// Factory builds a plugin over the scheduler's handle.
type Factory func(h framework.Handle) framework.Plugin

// PluginSpec is one entry of a profile's MultiPoint list. The list order is
// the order at every extension point; Weight applies at Score (0 means 1).
type PluginSpec struct {
	Name   string
	New    Factory
	Weight int64
}

// QueueSortPlugin orders the active queue.
type QueueSortPlugin interface {
	framework.Plugin
	Less(p1 *v1.Pod, t1 time.Time, p2 *v1.Pod, t2 time.Time) bool
}

// PreEnqueuePlugin keeps a pod out of the active queue while it returns non-success.
type PreEnqueuePlugin interface {
	framework.Plugin
	PreEnqueue(pod *v1.Pod) *framework.Status
}

// StaticFilterPlugin marks a Filter whose verdict depends only on the pod's
// nodeName, nodeSelector, node affinity and tolerations and on the node's
// name, taints, unschedulable flag and the labels those selectors name,
// never on other pods; the scheduler caches such verdicts per pod template
// and node class for the duration of one Sync (nodeclass.go).
type StaticFilterPlugin interface {
	StaticFilter()
}

// DefaultPlugins is the default profile's MultiPoint list for a version
// (docs/scheduler.md#default-profile). NodeDeclaredFeatures is not modelled.
func DefaultPlugins(f version.Features) []PluginSpec {
	specs := []PluginSpec{
		{Name: schedulinggates.Name, New: schedulinggates.New},
		{Name: queuesort.Name, New: queuesort.New},
		{Name: nodeunschedulable.Name, New: nodeunschedulable.New},
		{Name: nodename.Name, New: nodename.New},
		{Name: tainttoleration.Name, New: tainttoleration.New, Weight: 3},
		{Name: nodeaffinity.Name, New: nodeaffinity.New, Weight: 2},
		{Name: nodeports.Name, New: nodeports.New},
		{Name: noderesources.FitName, New: noderesources.NewFit, Weight: 1},
		{Name: volumerestrictions.Name, New: volumerestrictions.New},
		{Name: nodevolumelimits.Name, New: nodevolumelimits.New},
		// Score weight 1, but its scorer is off by default (PreScore skips).
		{Name: volumebinding.Name, New: volumebinding.New, Weight: 1},
		{Name: volumezone.Name, New: volumezone.New},
		{Name: podtopologyspread.Name, New: func(h framework.Handle) framework.Plugin { return podtopologyspread.New(h) }, Weight: 2},
		{Name: interpodaffinity.Name, New: func(h framework.Handle) framework.Plugin { return interpodaffinity.New(h) }, Weight: 2},
	}
	if f.DynamicResources {
		// Weight 2 from 1.35; 1.34 configures none, which means 1 (it scores 0 anyway).
		w := int64(2)
		if !f.Version.AtLeast(35, 0) {
			w = 1
		}
		specs = append(specs, PluginSpec{Name: dynamicresources.Name, New: dynamicresources.New, Weight: w})
	}
	return append(specs,
		PluginSpec{Name: defaultpreemption.Name, New: defaultpreemption.New},
		PluginSpec{Name: noderesources.BalancedAllocationName, New: noderesources.NewBalancedAllocation, Weight: 1},
		PluginSpec{Name: imagelocality.Name, New: imagelocality.New, Weight: 1},
	)
}

type weightedScore struct {
	plugin framework.ScorePlugin
	weight int64
}

// Framework is one profile's plugins expanded per extension point.
type Framework struct {
	SchedulerName string
	// plugins are every plugin of the profile in list order (queue.go
	// collects their cluster-event registrations).
	plugins    []framework.Plugin
	queueSort  QueueSortPlugin
	preEnqueue []PreEnqueuePlugin
	preFilter  []framework.PreFilterPlugin
	// skips holds the shared sets of skipped plugins (skipsets.go).
	skips  skipSets
	filter []framework.FilterPlugin
	// staticFilters is how many leading Filter plugins are StaticFilterPlugins.
	staticFilters int
	postFilter    []framework.PostFilterPlugin
	preScore      []framework.PreScorePlugin
	score         []weightedScore
	reserve       []framework.ReservePlugin
	preBind       []framework.PreBindPlugin
	// scratch holds reusable score lists, one per Score plugin; names the
	// scored nodes' names, read once per cycle.
	scratch []framework.NodeScoreList
	names   []string
	// feasible and totals are the cycle's feasible list and weighted totals,
	// reused by the next cycle unless a diagnosis keeps the totals.
	feasible []*framework.NodeInfo
	totals   []int64
	// memo keeps node-local raw scores per pod shape (scorememo.go).
	memo scoreMemo
	// fmemo keeps node-local Filter verdicts per pod shape (filtermemo.go).
	fmemo filterMemo
	// plainScores and plainFilters turn the memos off: every score and
	// verdict is computed (the tests compare).
	plainScores, plainFilters bool
}

// NewFramework instantiates specs over h, placing every plugin at each
// extension point it implements, in list order.
func NewFramework(schedulerName string, specs []PluginSpec, h framework.Handle) *Framework {
	fw := &Framework{SchedulerName: schedulerName}
	static := true
	for _, spec := range specs {
		pl := spec.New(h)
		fw.plugins = append(fw.plugins, pl)
		if p, ok := pl.(QueueSortPlugin); ok && fw.queueSort == nil {
			fw.queueSort = p
		}
		if p, ok := pl.(PreEnqueuePlugin); ok {
			fw.preEnqueue = append(fw.preEnqueue, p)
		}
		if p, ok := pl.(framework.PreFilterPlugin); ok {
			fw.preFilter = append(fw.preFilter, p)
		}
		if p, ok := pl.(framework.FilterPlugin); ok {
			fw.filter = append(fw.filter, p)
			if _, ok := pl.(StaticFilterPlugin); ok && static {
				fw.staticFilters++
			} else {
				static = false
			}
		}
		if p, ok := pl.(framework.PostFilterPlugin); ok {
			fw.postFilter = append(fw.postFilter, p)
		}
		if p, ok := pl.(framework.PreScorePlugin); ok {
			fw.preScore = append(fw.preScore, p)
		}
		if p, ok := pl.(framework.ScorePlugin); ok {
			w := spec.Weight
			if w == 0 {
				w = 1
			}
			fw.score = append(fw.score, weightedScore{plugin: p, weight: w})
		}
		if p, ok := pl.(framework.ReservePlugin); ok {
			fw.reserve = append(fw.reserve, p)
		}
		if p, ok := pl.(framework.PreBindPlugin); ok {
			fw.preBind = append(fw.preBind, p)
		}
	}
	return fw
}
