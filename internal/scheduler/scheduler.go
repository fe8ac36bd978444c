package scheduler

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/sim"
	"github.com/berth-sim/berth/internal/version"
)

// DefaultSchedulerName is the default profile's schedulerName and the
// controller's name.
const DefaultSchedulerName = v1.DefaultSchedulerName

// Queue timing (docs/scheduler.md#the-queue).
const (
	initialBackoff         = time.Second
	maxBackoff             = 10 * time.Second
	maxInUnschedulablePods = 5 * time.Minute
	// noteLengthLimit is the events API limit on a note.
	noteLengthLimit = 1024
)

// Scheduler is kube-scheduler for one schedulerName as a sim.Controller.
type Scheduler struct {
	// RecordScores keeps per-node verdicts and scores of successful attempts
	// in their Diagnosis too (failed attempts always keep their verdicts).
	RecordScores bool
	// PercentageOfNodesToScore is the profile's setting (0: adaptive, 100: all nodes).
	PercentageOfNodesToScore int32

	schedulerName string
	// plugins overrides the default profile (tests); nil means DefaultPlugins.
	plugins func(version.Features) []PluginSpec

	kubeVersion string
	features    version.Features
	fw          *Framework
	handle      *handle
	static      map[string]*staticVerdicts
	podInfos    map[string]cachedPodInfo
	// requestSums shares resource sums between pods with equal requests.
	requestSums framework.PodInfoCache
	diagnoses   map[string]*Diagnosis
	rejected    []rejection
	nominated   nominatedIndex
	observer    Observer
	// order is the cache's order of pods per node (podorder.go).
	order podOrder
	// perNodeStatic keeps static verdicts per node rather than per node
	// class (nodeclass.go); tests compare the two.
	perNodeStatic bool
	// afterPreempt, when set (tests), checks the incremental bookkeeping
	// after each preemption.
	afterPreempt func(s *cluster.State)
	// derived indexes pods' derived data by object for simulations
	// (simulate_prefilter.go), shared with every fork.
	derived *derivedCache
	// events are the profile's cluster-event registrations (queue.go);
	// parkedSeq is, per pod parked in this process, the sequence number of
	// the first cluster event after its failure.
	events    *queueEvents
	parkedSeq map[string]int64
}

// Observer watches scheduling attempts one by one, in queue order (the
// conformance harness replays them against upstream; explanations can
// trace them). It must not write to the state.
type Observer interface {
	// BeforeAttempt: the cycle for podKey is about to run on s as it is now.
	// first is true for the pod's first attempt.
	BeforeAttempt(s *cluster.State, podKey string, first bool)
	// AfterAttempt: the outcome is written (bound, or failed and any
	// preemption carried out); d is the attempt's record.
	AfterAttempt(s *cluster.State, podKey string, first bool, d *Diagnosis)
}

// Observe installs o; successful attempts then keep their scores too.
func (sc *Scheduler) Observe(o Observer) {
	sc.observer = o
	sc.RecordScores = sc.RecordScores || o != nil
}

type cachedPodInfo struct {
	pod *v1.Pod
	rv  string
	pi  *framework.PodInfo
}

var _ sim.Controller = (*Scheduler)(nil)

// New returns the default scheduler.
func New() *Scheduler { return NewWithProfile(DefaultSchedulerName, nil) }

// NewWithProfile returns a scheduler for schedulerName whose MultiPoint list
// comes from plugins (nil: the default profile for the cluster's version).
func NewWithProfile(schedulerName string, plugins func(version.Features) []PluginSpec) *Scheduler {
	return &Scheduler{schedulerName: schedulerName, plugins: plugins,
		podInfos: map[string]cachedPodInfo{}, diagnoses: map[string]*Diagnosis{}}
}

// Name is the controller's name, which is also the events' reporting component.
func (sc *Scheduler) Name() string { return sc.schedulerName }

// LastDiagnosis returns the record of the pod's latest attempt in this
// process, or nil.
func (sc *Scheduler) LastDiagnosis(podKey string) *Diagnosis {
	d := sc.diagnoses[podKey]
	if d != nil && d.NodeToStatus.ByPosition != nil {
		// Failed cycles keep their rejections by position (cycle.go).
		d.NodeToStatus.Statuses, d.NodeToStatus.ByPosition = d.NodeToStatus.Map(), nil
	}
	return d
}

// ScoreWeights returns each Score plugin's weight by name, for reports that
// show weighted scores; nil before the first Sync.
func (sc *Scheduler) ScoreWeights() map[string]int64 {
	if sc.fw == nil {
		return nil
	}
	out := make(map[string]int64, len(sc.fw.score))
	for _, ws := range sc.fw.score {
		out[ws.plugin.Name()] = ws.weight
	}
	return out
}

func (sc *Scheduler) ensureFramework(s *cluster.State) error {
	if sc.fw != nil && sc.kubeVersion == s.Info.KubernetesVersion {
		return nil
	}
	v, err := version.Parse(s.Info.KubernetesVersion)
	if err != nil {
		return err
	}
	sc.kubeVersion, sc.features = s.Info.KubernetesVersion, version.FeaturesFor(v)
	sc.handle = &handle{features: sc.features, snap: NewSnapshot(nil), sched: sc}
	specs := DefaultPlugins
	if sc.plugins != nil {
		specs = sc.plugins
	}
	sc.fw = NewFramework(sc.schedulerName, specs(sc.features), sc.handle)
	sc.handle.fw = sc.fw
	sc.events = newQueueEvents(sc.fw.plugins, sc.features.QueueingHints)
	return nil
}

// podInfo returns the derived data of a pod, reusing it while the object is unchanged.
func (sc *Scheduler) podInfo(key string, p *v1.Pod) *framework.PodInfo {
	if c, ok := sc.podInfos[key]; ok && c.pod == p && c.rv == p.ResourceVersion {
		return c.pi
	}
	pi := sc.requestSums.New(p, sc.features.PodLevelResources)
	sc.podInfos[key] = cachedPodInfo{pod: p, rv: p.ResourceVersion, pi: pi}
	return pi
}

func (sc *Scheduler) responsibleFor(p *v1.Pod) bool {
	name := p.Spec.SchedulerName
	if name == "" {
		name = DefaultSchedulerName
	}
	return name == sc.schedulerName
}

type pendingPod struct {
	key string
	pod *v1.Pod
	q   *cluster.QueuedPod
}

// Sync schedules every pending pod that is due, in queue order.
func (sc *Scheduler) Sync(s *cluster.State) (bool, error) {
	if err := sc.ensureFramework(s); err != nil {
		return false, err
	}
	pending := sc.duePods(s)
	if len(pending) == 0 {
		return false, nil
	}
	sc.buildSnapshot(s)
	for _, p := range pending {
		sc.attempt(s, p)
	}
	return true, nil
}

// duePods updates the queue bookkeeping and returns the pods to try now,
// ordered by the QueueSort plugin.
func (sc *Scheduler) duePods(s *cluster.State) []pendingPod {
	queue := s.Scheduler.Queue
	if queue == nil {
		queue = map[string]*cluster.QueuedPod{}
		s.Scheduler.Queue = queue
	}
	for key := range queue {
		if p, ok := s.Pods[key]; !ok || p.Spec.NodeName != "" {
			delete(queue, key)
			delete(sc.diagnoses, key)
			delete(sc.parkedSeq, key)
		}
	}
	sc.moveParked(s, queue)
	timers := map[cluster.Timer]bool{}
	for _, t := range s.Timers {
		if t.Owner == sc.schedulerName {
			timers[t] = true
		}
	}
	var due []pendingPod
	for _, key := range sc.arrivals(s) {
		p := s.Pods[key]
		q := queue[key]
		if sc.gated(p) {
			continue
		}
		if q.Unschedulable {
			// The 5-minute flush moves every leftover; a pod that failed
			// with an error also leaves when its own backoff timer fires.
			flushed := !s.Now.Before(q.ParkedAt.Add(maxInUnschedulablePods))
			if !flushed && !(failedWithError(q) && s.Now.Equal(q.BackoffUntil)) {
				continue
			}
			q.Unschedulable = false
		}
		if s.Now.Before(q.BackoffUntil) {
			t := cluster.Timer{At: q.BackoffUntil, Owner: sc.schedulerName, Object: key, Settling: true}
			if !timers[t] {
				timers[t] = true
				s.AddTimer(t)
			}
			continue
		}
		due = append(due, pendingPod{key: key, pod: p, q: q})
	}
	sortDue(due, sc.fw.queueSort)
	return due
}

// arrivals returns the keys of the pending pods this scheduler is
// responsible for, adding the ones it has not seen yet to the queue in
// creation order (the order its informer would have delivered them).
func (sc *Scheduler) arrivals(s *cluster.State) []string {
	queue := s.Scheduler.Queue
	var keys []string
	var fresh []*v1.Pod
	for key, p := range s.Pods {
		if p.Spec.NodeName != "" || cluster.IsTerminal(p) || p.DeletionTimestamp != nil || !sc.responsibleFor(p) {
			continue
		}
		keys = append(keys, key)
		if queue[key] == nil {
			fresh = append(fresh, p)
		}
	}
	sort.Strings(keys)
	cluster.SortByCreation(s, fresh)
	for _, p := range fresh {
		ts := p.CreationTimestamp.Time
		if ts.IsZero() {
			ts = s.Now
		}
		queue[cluster.Key(p.Namespace, p.Name)] = &cluster.QueuedPod{Timestamp: ts, Seq: nextQueueSeq(s)}
	}
	return keys
}

// nextQueueSeq numbers an addition to the active queue.
func nextQueueSeq(s *cluster.State) int64 {
	s.Scheduler.QueueSeq++
	return s.Scheduler.QueueSeq
}

func (sc *Scheduler) gated(p *v1.Pod) bool {
	for _, pl := range sc.fw.preEnqueue {
		if !pl.PreEnqueue(p).IsSuccess() {
			return true
		}
	}
	return false
}

// buildSnapshot builds NodeInfos in node-tree order with the bound pods and
// image summaries; it is then kept incrementally for the rest of the Sync.
func (sc *Scheduler) buildSnapshot(s *cluster.State) {
	syncNodeOrder(s)
	inserted := make([]*v1.Node, 0, len(s.Scheduler.NodeOrder))
	for _, name := range s.Scheduler.NodeOrder {
		inserted = append(inserted, s.Nodes[name])
	}
	ordered := NodeTreeOrder(inserted)
	images := imageSummaries(inserted)
	infos := make([]*framework.NodeInfo, 0, len(ordered))
	for _, n := range ordered {
		ni := framework.NewNodeInfo(n)
		setImageStates(ni, images)
		infos = append(infos, ni)
	}
	snap := NewSnapshot(infos)
	for key := range sc.podInfos {
		if _, ok := s.Pods[key]; !ok {
			delete(sc.podInfos, key)
		}
	}
	sc.order.sync(s)
	for _, ni := range snap.nodes {
		for _, key := range sc.order.byNode[ni.Name()] {
			ni.AddPod(sc.podInfo(key, s.Pods[key]))
		}
		sc.order.usedPorts(ni)
	}
	sc.handle.state, sc.handle.snap, sc.handle.services, sc.handle.pvs = s, snap, nil, nil
	sc.handle.epoch, sc.handle.writes = sc.handle.epoch+1, nil
	sc.nominated.valid = false
	sc.static = map[string]*staticVerdicts{}
}

// imageSummaries are the cache's image states: an image's size is the one
// reported by the first node the cache added that has it (insertion order,
// not node-tree order); NumNodes counts nodes.
func imageSummaries(inserted []*v1.Node) map[string]*framework.ImageStateSummary {
	images := map[string]*framework.ImageStateSummary{}
	for _, n := range inserted {
		counted := map[string]bool{}
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				sum := images[name]
				if sum == nil {
					sum = &framework.ImageStateSummary{Size: img.SizeBytes}
					images[name] = sum
				}
				if !counted[name] {
					counted[name] = true
					sum.NumNodes++
				}
			}
		}
	}
	return images
}

// setImageStates points the node's image states at the summaries.
func setImageStates(ni *framework.NodeInfo, images map[string]*framework.ImageStateSummary) {
	ni.ImageStates = nil
	for _, img := range ni.Node.Status.Images {
		for _, name := range img.Names {
			if ni.ImageStates == nil {
				ni.ImageStates = map[string]*framework.ImageStateSummary{}
			}
			ni.ImageStates[name] = images[name]
		}
	}
}

// attempt runs one cycle for p and writes its outcome to the state.
func (sc *Scheduler) attempt(s *cluster.State, p pendingPod) {
	first := p.q.Attempts == 0
	if sc.observer != nil {
		sc.observer.BeforeAttempt(s, p.key, first)
	}
	res := sc.cycle(s, p)
	if sc.observer != nil {
		sc.observer.AfterAttempt(s, p.key, first, res.diag)
	}
}

func (sc *Scheduler) cycle(s *cluster.State, p pendingPod) cycleResult {
	pi := sc.podInfo(p.key, p.pod)
	p.q.Generation = s.SchedulingGeneration
	res := sc.scheduleOne(s, pi)
	sc.diagnoses[p.key] = res.diag
	if res.status.IsSuccess() {
		if st := sc.fw.reserveAndPreBind(res.state, pi, res.node); !st.IsSuccess() {
			res.status, res.diag.Message, res.diag.SelectedNode, res.late = st, st.Message(), "", true
			sc.recordFailure(s, p, res)
			return res
		}
		sc.settleNomination(p.pod, res.node)
		sc.bind(s, p, pi, res.node)
		return res
	}
	sc.recordFailure(s, p, res)
	sc.preempt(s, p, res.preemption)
	return res
}

func (sc *Scheduler) eventSource() cluster.EventSource {
	return cluster.EventSource{Component: sc.schedulerName, Series: true}
}

// bind assigns the pod to node as the binding subresource would.
func (sc *Scheduler) bind(s *cluster.State, p pendingPod, pi *framework.PodInfo, node string) {
	pod := p.pod
	// One write: the condition rides along with the binding's version.
	setPodScheduledCondition(s.Now, &pod.Status, v1.ConditionTrue, "", "")
	s.BindPod(pod, node)
	sc.podInfos[p.key] = cachedPodInfo{pod: pod, rv: pod.ResourceVersion, pi: pi}
	sc.handle.snap.AddPod(pi, node)
	sc.order.add(p.key, pod)
	delete(s.Scheduler.Queue, p.key)
	// Upstream formats "Successfully assigned %v/%v to %v" with three
	// strings; concatenation writes the same bytes without fmt.
	s.Record(sc.eventSource(), cluster.Regarding("Pod", "v1", pod), v1.EventTypeNormal, "Scheduled",
		"Successfully assigned "+pod.Namespace+"/"+pod.Name+" to "+node)
}

// recordFailure writes the FailedScheduling event and condition and parks
// the pod with its backoff (errors are parked the same way).
func (sc *Scheduler) recordFailure(s *cluster.State, p pendingPod, res cycleResult) {
	pod := p.pod
	msg := res.diag.Message
	reason := v1.PodReasonUnschedulable
	if !res.status.IsRejected() {
		reason = "SchedulerError"
	}
	note := msg
	if len(note) > noteLengthLimit {
		note = note[:noteLengthLimit-len(" ...")] + " ..."
	}
	s.Record(sc.eventSource(), cluster.Regarding("Pod", "v1", pod), v1.EventTypeWarning, "FailedScheduling", note)
	if s.UpdatePodStatus(pod, func(st *v1.PodStatus) bool {
		return setPodScheduledCondition(s.Now, st, v1.ConditionFalse, reason, msg)
	}) {
		sc.podInfos[p.key] = cachedPodInfo{pod: pod, rv: pod.ResourceVersion, pi: sc.podInfos[p.key].pi}
	}
	q := p.q
	q.Attempts++
	q.ParkedAt = s.Now
	q.Timestamp = s.Now
	q.Seq = nextQueueSeq(s)
	q.BackoffUntil = s.Now.Add(backoffFor(q.Attempts))
	recordRejectors(q, res)
	// The pod waits in the unschedulable pool for an event its rejectors
	// registered (any event of interest when none did), or the 5-minute
	// flush. A pod no plugin rejected (an error, no nodes) is upstream's
	// backoff-queue case: it is also retried when its backoff timer fires,
	// a timer that does not keep `apply` running (docs/scheduler.md#the-queue).
	q.Unschedulable = true
	if sc.parkedSeq == nil {
		sc.parkedSeq = map[string]int64{}
	}
	sc.parkedSeq[p.key] = s.EventSeq()
	s.AddTimer(cluster.Timer{At: q.ParkedAt.Add(maxInUnschedulablePods), Owner: sc.schedulerName, Object: p.key})
	if failedWithError(q) {
		s.AddTimer(cluster.Timer{At: q.BackoffUntil, Owner: sc.schedulerName, Object: p.key})
	}
}

// failedWithError reports whether the pod's last failure had no rejecting
// plugin (upstream: no UnschedulablePlugins nor PendingPlugins).
func failedWithError(q *cluster.QueuedPod) bool {
	return q.Recorded && len(q.Plugins) == 0 && len(q.PendingPlugins) == 0
}

// backoffFor is 1s << (attempts-1), capped at 10s.
func backoffFor(attempts int) time.Duration {
	d := initialBackoff
	for i := 1; i < attempts && d < maxBackoff; i++ {
		d *= 2
	}
	if d > maxBackoff {
		d = maxBackoff
	}
	return d
}

// setPodScheduledCondition sets the PodScheduled condition, keeping the
// transition time when the status does not change; it reports a change.
func setPodScheduledCondition(at time.Time, st *v1.PodStatus, status v1.ConditionStatus, reason, message string) bool {
	now := metav1.NewTime(at)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != v1.PodScheduled {
			continue
		}
		if c.Status == status && c.Reason == reason && c.Message == message {
			return false
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return true
	}
	st.Conditions = append(st.Conditions, v1.PodCondition{
		Type: v1.PodScheduled, Status: status, Reason: reason, Message: message, LastTransitionTime: now,
	})
	return true
}
