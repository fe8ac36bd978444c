package scheduler

import (
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/podtopologyspread"
)

// The scheduling queue's wake-ups (docs/scheduler.md#the-queue): a failed
// pod remembers the plugins that rejected it; a cluster event moves it out
// of the unschedulable pool only if one of them registered the event and
// its queueing hint says Queue.

// strategy is where an event sends a parked pod (upstream's queueingStrategy).
type strategy int

const (
	stay strategy = iota
	afterBackoff
	immediately
)

// registration is one plugin's interest in one event.
type registration struct {
	plugin int
	event  cluster.ClusterEvent
	hint   framework.QueueingHintFn
}

// queueEvents holds the profile's registrations.
type queueEvents struct {
	// names are the plugins by index; index gives a name's index.
	names []string
	index map[string]int
	regs  []registration
	// hints says whether hints are consulted (else every hint is Queue).
	hints bool
}

// newQueueEvents collects the registrations of every plugin of the
// profile; a plugin without EnqueueExtensions is registered for every
// event, as upstream does.
func newQueueEvents(plugins []framework.Plugin, hints bool) *queueEvents {
	qe := &queueEvents{index: map[string]int{}, hints: hints}
	for _, pl := range plugins {
		if !canReject(pl) {
			continue
		}
		i := len(qe.names)
		qe.names = append(qe.names, pl.Name())
		qe.index[pl.Name()] = i
		ext, ok := pl.(framework.EnqueueExtensions)
		if !ok {
			qe.regs = append(qe.regs, registration{plugin: i, event: cluster.ClusterEvent{Resource: cluster.ResourceWildCard, Action: cluster.ActionAll}})
			continue
		}
		nodeAdd, nodeTaint := false, false
		for _, r := range ext.EventsToRegister(hints) {
			qe.regs = append(qe.regs, registration{plugin: i, event: r.Event, hint: r.Hint})
			if r.Event.Resource == cluster.ResourceNode {
				nodeAdd = nodeAdd || r.Event.Action&cluster.ActionAdd != 0
				nodeTaint = nodeTaint || r.Event.Action&cluster.ActionUpdateNodeTaint != 0
			}
		}
		if nodeAdd && !nodeTaint {
			// Upstream registers a taint update, hint-less, for every plugin
			// that registered Node/Add without it (its pre-check workaround).
			qe.regs = append(qe.regs, registration{plugin: i, event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: cluster.ActionUpdateNodeTaint}})
		}
	}
	return qe
}

// canReject: only PreEnqueue, PreFilter, Filter and Reserve plugins can
// reject a pod, and only they register events.
func canReject(pl framework.Plugin) bool {
	switch pl.(type) {
	case PreEnqueuePlugin, framework.PreFilterPlugin, framework.FilterPlugin, framework.ReservePlugin:
		return true
	}
	return false
}

// matching is what one incoming event means to the profile: the
// registrations it matches, in order, and their plugins as a mask
// (plugin lists longer than 64 are not expected: the default profile has
// 19; extra plugins share the last bit).
type matching struct {
	regs []int32
	mask uint64
}

func (qe *queueEvents) match(ev cluster.ClusterEvent) matching {
	var m matching
	for i, r := range qe.regs {
		if r.event.Matches(ev) {
			m.regs = append(m.regs, int32(i))
			m.mask |= bit(r.plugin)
		}
	}
	return m
}

func bit(i int) uint64 { return 1 << uint(min(i, 63)) }

// rejectors is a parked pod's rejecting plugins as a mask, unschedulable
// and pending ones apart.
type rejectors struct {
	all, pending uint64
}

func (qe *queueEvents) rejectorsOf(q *cluster.QueuedPod) rejectors {
	var r rejectors
	for _, n := range q.Plugins {
		if i, ok := qe.index[n]; ok {
			r.all |= bit(i)
		}
	}
	for _, n := range q.PendingPlugins {
		if i, ok := qe.index[n]; ok {
			r.all |= bit(i)
			r.pending |= bit(i)
		}
	}
	return r
}

// worth is upstream's isPodWorthRequeuing for one pod and one event that
// matches m: no rejector means any event of interest
// helps; otherwise the rejectors' hints for matching registrations decide,
// a pending plugin's Queue skipping the backoff.
func (qe *queueEvents) worth(r rejectors, known bool, pi *framework.PodInfo, e *cluster.SchedulingEvent, m *matching) strategy {
	if m.mask == 0 {
		return stay // no plugin registered the event
	}
	if !known || r.all == 0 {
		return afterBackoff
	}
	if m.mask&r.all == 0 {
		return stay
	}
	out := stay
	for _, i := range m.regs {
		reg := &qe.regs[i]
		b := bit(reg.plugin)
		if r.all&b == 0 {
			continue
		}
		if qe.hints && reg.hint != nil && reg.hint(pi, e.Old, e.New) == framework.QueueSkip {
			continue
		}
		if r.pending&b != 0 {
			return immediately
		}
		if r.pending == 0 {
			return afterBackoff
		}
		out = afterBackoff
	}
	return out
}

// crossTopology is upstream's pre-filter of assigned-pod Add and label
// Update events when hints are off: only pods rejected by
// PodTopologySpread in the same namespace, or whose required affinity
// terms select the pod, are considered.
func crossTopology(q *cluster.QueuedPod, pi *framework.PodInfo, e *cluster.SchedulingEvent) bool {
	added, ok := e.New.(*v1.Pod)
	if !ok {
		return true
	}
	if slices.Contains(q.Plugins, podtopologyspread.Name) && added.Namespace == pi.Pod.Namespace {
		return true
	}
	for i := range pi.RequiredAffinityTerms {
		if pi.RequiredAffinityTerms[i].Matches(added, nil) {
			return true
		}
	}
	return false
}

// recordRejectors notes the plugins that rejected the attempt on the queue
// entry: PreFilter's rejecting plugin (and, unless it stopped the cycle at
// once, the plugins that narrowed the nodes), every node's rejecting
// plugin, or nothing for an error (upstream's Diagnosis.UnschedulablePlugins).
func recordRejectors(q *cluster.QueuedPod, res cycleResult) {
	q.Plugins, q.PendingPlugins, q.Recorded = nil, nil, true
	if !res.status.IsRejected() || res.diag == nil {
		return
	}
	set := map[string]bool{}
	var pending []string
	add := func(st *framework.Status) {
		if st == nil || st.Plugin() == "" {
			return
		}
		if st.Code() == framework.Pending {
			pending = append(pending, st.Plugin())
			return
		}
		if st.IsRejected() {
			set[st.Plugin()] = true
		}
	}
	d := res.diag
	if res.late {
		// Reserve rejected the chosen node: only its plugin.
		add(res.status)
	} else if pst := d.PreFilterStatus; pst != nil {
		if pst.Code() != framework.UnschedulableAndUnresolvable || pst.Plugin() == "" {
			for _, n := range d.NarrowingPlugins {
				set[n] = true
			}
		}
		add(pst)
	} else {
		for _, n := range d.NarrowingPlugins {
			set[n] = true
		}
		// The statuses may be kept by position (docs/scheduler.md#failed-cycles-by-position).
		d.NodeToStatus.Each(func(_ string, st *framework.Status) { add(st) })
	}
	for n := range set {
		q.Plugins = append(q.Plugins, n)
	}
	sort.Strings(q.Plugins)
	sort.Strings(pending)
	q.PendingPlugins = slices.Compact(pending)
}

// moveParked reads the cluster events announced since this scheduler's
// last Sync and moves every parked pod that one of them helps: out of the
// unschedulable pool, to wait for its backoff (or not even that, for a
// pending plugin's Queue). A pod only hears of the events after its own
// failure. An entry saved before rejectors were recorded counts every
// event of interest; one the older binary had already moved stays moved.
func (sc *Scheduler) moveParked(s *cluster.State, queue map[string]*cluster.QueuedPod) {
	sc.handle.state, sc.handle.services = s, nil
	events, from := s.ReadEvents(sc.schedulerName)
	loadedGeneration := s.SchedulingGeneration - s.EventSeq()
	var matches []matching
	pre := &preChecker{s: s, podLevel: sc.features.PodLevelResources}
	for key, q := range queue {
		if !q.Unschedulable {
			continue
		}
		p := s.Pods[key]
		if p == nil || !sc.responsibleFor(p) {
			continue // the queue is shared by the profiles
		}
		if !q.Recorded && q.Generation < loadedGeneration {
			q.Unschedulable = false // moved by the older binary's rule
			continue
		}
		start := max(sc.parkedSeq[key], from)
		if start-from >= int64(len(events)) {
			continue
		}
		if matches == nil {
			// Few distinct events: match each kind once.
			byKind := map[cluster.ClusterEvent]matching{}
			matches = make([]matching, len(events))
			for i := range events {
				m, ok := byKind[events[i].Event]
				if !ok {
					m = sc.events.match(events[i].Event)
					byKind[events[i].Event] = m
				}
				matches[i] = m
			}
		}
		r := sc.events.rejectorsOf(q)
		var pi *framework.PodInfo
		moved := stay
		for i := start - from; i < int64(len(events)); i++ {
			e := &events[i]
			if e.Pod != "" && e.Pod != key {
				continue
			}
			m := &matches[i]
			if m.mask == 0 || q.Recorded && m.mask&r.all == 0 && r.all != 0 {
				continue
			}
			if pi == nil {
				pi = sc.podInfo(key, p)
			}
			if !sc.events.hints && e.Event.Resource == cluster.ResourceAssignedPod &&
				e.Event.Action&(cluster.ActionAdd|cluster.ActionUpdatePodLabel) != 0 && !crossTopology(q, pi, e) {
				continue
			}
			if !sc.events.hints && e.Event.Resource == cluster.ResourceNode && !pre.passes(pi, e) {
				continue
			}
			st := sc.events.worth(r, q.Recorded, pi, e, m)
			if st > moved {
				moved = st
			}
			if moved == immediately || moved == afterBackoff && r.pending == 0 {
				break
			}
		}
		switch moved {
		case immediately:
			q.Unschedulable, q.BackoffUntil = false, s.Now
		case afterBackoff:
			q.Unschedulable = false
		}
	}
}
