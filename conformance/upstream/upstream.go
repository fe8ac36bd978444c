// Package upstream runs the genuine kube-scheduler (k8s.io/kubernetes
// pkg/scheduler, the version pinned in this module's go.mod) in-process, as
// one side of the conformance comparison.
//
// The scheduler is built with scheduler.New: the v1 default profile of that
// release, default feature gates, the scenario's percentageOfNodesToScore, a
// fake clientset and the scheduler's own shared informers. Nothing of the
// scheduling cycle is replaced; each Schedule call creates the pod, waits until
// the real queue holds it in activeQ and runs exactly one cycle with
// sched.ScheduleOne, the way kube-scheduler's own loop does.
//
// How the internals are observed, least intrusively and exactly:
//
//   - sched.SchedulePod and sched.FailureHandler are exported fields; they are
//     wrapped, calling the originals. The wrapper sees the ScheduleResult
//     (chosen node, number of nodes evaluated) or the FitError, whose
//     Diagnosis holds upstream's own per-node statuses; the failure handler's
//     status message is the PodScheduled condition message, byte for byte.
//   - The profile's framework is wrapped (embedding the real one) to copy the
//     results of RunPreFilterPlugins, RunFilterPluginsWithNominatedPods and
//     RunScorePlugins. RunScorePlugins already returns each plugin's
//     normalized score multiplied by its weight and the node totals, so no
//     score is recomputed. Plugins keep the inner framework as their Handle,
//     so preemption's dry runs are not mixed into the observation.
//   - Events are captured synchronously by a RecorderFactory instead of the
//     asynchronous, aggregating broadcaster; notes are formatted as the real
//     recorder formats them (FailedScheduling notes are truncated upstream).
//
// Alignment: upstream picks among equal top scores effectively at random. When
// the caller's align node is in the top-scoring set, the SchedulePod wrapper
// returns it as the suggested host, so assume, reserve and bind all target it,
// exactly as if upstream's heap had popped it.
//
// One attempt per pod: after a failed attempt the harness waits for any
// asynchronous preemption started by the attempt to finish (DefaultPreemption's
// PreEnqueue admits the pod again), then deletes the pod, so unschedulable pods
// never come back through the queue and later attempts see the same cluster as
// a one-attempt-per-pod simulator would. Victims deleted by preemption stay
// deleted.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/berth-sim/berth/conformance/scenario"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// waitTimeout bounds every wait on informers; they normally take microseconds.
const waitTimeout = 10 * time.Second

var podsResource = v1.SchemeGroupVersion.WithResource("pods")

// Runner is the upstream scheduler behind scenario.Scheduler.
type Runner struct {
	// SkipNodeVerdicts leaves PodResult.Nodes nil (benchmarks); node, message,
	// top set and examined count are still reported.
	SkipNodeVerdicts bool
	// CycleTime adds up the wall time spent inside ScheduleOne over all
	// Schedule calls: the scheduling cycle, without the harness's waits for
	// informers and for the asynchronous binding cycle (benchmarks).
	CycleTime time.Duration

	ctx    context.Context
	cancel context.CancelFunc

	client    *fake.Clientset
	informers informers.SharedInformerFactory
	sched     *scheduler.Scheduler
	events    *eventLog

	nodeNames       []string
	priorityClasses map[string]*schedulingv1.PriorityClass

	// obs is replaced before each cycle; only the cycle's goroutines touch it.
	obs   *observation
	align string

	mu       sync.Mutex
	bindings map[string]string // pod key -> node, from pods/binding
	bound    int               // pods with spec.nodeName in the fake API

	// mirror is set in end-to-end mode (mirror.go).
	mirror *mirrorState
}

var _ scenario.Scheduler = (*Runner)(nil)

// New returns an empty Runner; call Load before Schedule.
func New() *Runner { return &Runner{} }

// Event is an event the scheduler recorded, in emission order.
type Event = recordedEvent

// Events returns every event recorded so far.
func (r *Runner) Events() []Event { return r.events.snapshot() }

// Load starts a fresh scheduler over the scenario's cluster and waits until
// its cache holds every node and existing pod.
func (r *Runner) Load(s *scenario.Scenario) error {
	if r.sched != nil {
		return errors.New("upstream: Load called twice")
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	// The plain object tracker: NewClientset's field-managed tracker rebuilds a
	// REST mapper on every write, which cost more than scheduling itself.
	r.client = fake.NewSimpleClientset() //nolint:staticcheck // see above
	r.events = &eventLog{}
	r.bindings = map[string]string{}
	r.priorityClasses = map[string]*schedulingv1.PriorityClass{}
	r.installReactors()

	if err := r.createObjects(s); err != nil {
		return err
	}

	pct := s.PercentageOfNodesToScore
	r.informers = scheduler.NewInformerFactory(r.client, 0)
	sched, err := scheduler.New(r.ctx, r.client, r.informers, nil, r.events.recorderFactory,
		scheduler.WithPercentageOfNodesToScore(&pct))
	if err != nil {
		return fmt.Errorf("upstream: scheduler.New: %w", err)
	}
	r.sched = sched
	r.instrument()

	r.informers.Start(r.ctx.Done())
	for typ, ok := range r.informers.WaitForCacheSync(r.ctx.Done()) {
		if !ok {
			return fmt.Errorf("upstream: informer for %v did not sync", typ)
		}
	}
	// A pod that arrives before its node makes the cache create a placeholder
	// entry without a Node, so count real nodes, not cache entries.
	return r.waitFor("cache to hold the initial cluster", func() bool {
		pods, err := r.sched.Cache.PodCount()
		if err != nil || pods != r.boundCount() {
			return false
		}
		nodes := 0
		for _, info := range r.sched.Cache.Dump().Nodes {
			if info.Node() != nil {
				nodes++
			}
		}
		return nodes == len(s.Nodes)
	})
}

func (r *Runner) createObjects(s *scenario.Scenario) error {
	ctx := r.ctx
	cs := r.client
	for _, o := range s.Namespaces {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: namespace %s: %w", o.Name, err)
		}
	}
	for _, o := range s.PriorityClasses {
		r.priorityClasses[o.Name] = o
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: priorityclass %s: %w", o.Name, err)
		}
	}
	for _, o := range s.Nodes {
		r.nodeNames = append(r.nodeNames, o.Name)
		if _, err := cs.CoreV1().Nodes().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: node %s: %w", o.Name, err)
		}
	}
	sort.Strings(r.nodeNames)
	for _, o := range s.Services {
		if _, err := cs.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: service %s/%s: %w", o.Namespace, o.Name, err)
		}
	}
	for _, o := range s.ReplicaSets {
		if _, err := cs.AppsV1().ReplicaSets(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: replicaset %s/%s: %w", o.Namespace, o.Name, err)
		}
	}
	for _, o := range s.StatefulSets {
		if _, err := cs.AppsV1().StatefulSets(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: statefulset %s/%s: %w", o.Namespace, o.Name, err)
		}
	}
	if err := r.createStorage(s); err != nil {
		return err
	}
	for _, o := range s.Existing {
		if o.Spec.NodeName == "" {
			return fmt.Errorf("upstream: existing pod %s/%s has no spec.nodeName", o.Namespace, o.Name)
		}
		if _, err := cs.CoreV1().Pods(o.Namespace).Create(ctx, r.admit(o), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: pod %s/%s: %w", o.Namespace, o.Name, err)
		}
	}
	return nil
}

// installReactors makes pods/binding behave like the API server (the fake
// tracker would otherwise drop it) and counts bound pods, so waits can compare
// the scheduler's cache with the API.
func (r *Runner) installReactors() {
	tracker := r.client.Tracker()
	r.client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, k8sruntime.Object, error) {
		create := action.(clienttesting.CreateAction)
		if action.GetSubresource() == "binding" {
			binding := create.GetObject().(*v1.Binding)
			obj, err := tracker.Get(podsResource, binding.Namespace, binding.Name)
			if err != nil {
				return true, nil, err
			}
			pod := obj.(*v1.Pod).DeepCopy()
			if pod.Spec.NodeName != "" {
				return true, nil, fmt.Errorf("pod %s/%s is already assigned to node %q", pod.Namespace, pod.Name, pod.Spec.NodeName)
			}
			pod.Spec.NodeName = binding.Target.Name
			if err := tracker.Update(podsResource, pod, pod.Namespace); err != nil {
				return true, nil, err
			}
			r.mu.Lock()
			r.bindings[pod.Namespace+"/"+pod.Name] = binding.Target.Name
			r.bound++
			r.mu.Unlock()
			return true, binding, nil
		}
		if action.GetSubresource() == "" {
			if pod, ok := create.GetObject().(*v1.Pod); ok && pod.Spec.NodeName != "" {
				r.mu.Lock()
				r.bound++
				r.mu.Unlock()
			}
		}
		return false, nil, nil
	})
	r.client.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, k8sruntime.Object, error) {
		del := action.(clienttesting.DeleteAction)
		if obj, err := tracker.Get(podsResource, del.GetNamespace(), del.GetName()); err == nil && obj.(*v1.Pod).Spec.NodeName != "" {
			r.mu.Lock()
			r.bound--
			r.mu.Unlock()
		}
		return false, nil, nil
	})
}

func (r *Runner) boundCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bound
}

// instrument installs the observing wrappers described in the package comment.
func (r *Runner) instrument() {
	name := v1.DefaultSchedulerName
	r.sched.Profiles[name] = &observingFramework{Framework: r.sched.Profiles[name], runner: r}

	schedulePod := r.sched.SchedulePod
	r.sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		result, err := schedulePod(ctx, f, state, podInfo)
		obs := r.obs
		obs.pod = podInfo.Pod
		if err != nil {
			var fitErr *framework.FitError
			if errors.As(err, &fitErr) {
				obs.fitError = fitErr
			} else {
				obs.scheduleErr = err
			}
			return result, err
		}
		obs.feasibleOnly = result.SuggestedHost
		obs.evaluated = result.EvaluatedNodes
		if r.align != "" && r.align != result.SuggestedHost {
			for _, n := range topNodes(obs.scores) {
				if n == r.align {
					result.SuggestedHost = r.align
				}
			}
		}
		obs.suggested = result.SuggestedHost
		return result, nil
	}

	failureHandler := r.sched.FailureHandler
	r.sched.FailureHandler = func(ctx context.Context, f framework.Framework, podInfo *framework.QueuedPodInfo, status *fwk.Status, ni *fwk.NominatingInfo, start time.Time) {
		r.obs.mu.Lock()
		r.obs.failure = status
		if ni != nil {
			r.obs.nominated = ni.NominatedNodeName
		}
		r.obs.mu.Unlock()
		failureHandler(ctx, f, podInfo, status, ni, start)
	}
}

// Schedule creates pod, runs one scheduling cycle and waits until the pod is
// bound (and confirmed in the scheduler's cache) or, when unschedulable, gone.
func (r *Runner) Schedule(pod *v1.Pod, align string) (scenario.PodResult, error) {
	p := r.admit(pod)
	key := p.Namespace + "/" + p.Name
	res := scenario.PodResult{Pod: key}

	r.obs = newObservation()
	r.align = align
	eventsBefore := len(r.events.snapshot())
	if _, err := r.client.CoreV1().Pods(p.Namespace).Create(r.ctx, p, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("upstream: create pod %s: %w", key, err)
	}
	if err := r.waitFor("pod "+key+" in activeQ", func() bool {
		pods, summary := r.sched.SchedulingQueue.PendingPods()
		return len(pods) == 1 && pods[0].UID == p.UID && summary == "activeQ:1; backoffQ:0; unschedulablePods:0"
	}); err != nil {
		return res, err
	}

	return r.runCycle(p, eventsBefore, func() bool {
		pods, _ := r.sched.SchedulingQueue.PendingPods()
		return len(pods) == 0
	})
}

// runCycle runs one ScheduleOne, which pops p, and reports its outcome once
// binding or retirement has finished; queueSettled tells when the queue is
// as it should be after an unschedulable pod was removed.
// A nil p is the pod the queue popped, whichever it was.
func (r *Runner) runCycle(p *v1.Pod, eventsBefore int, queueSettled func() bool) (scenario.PodResult, error) {
	start := time.Now()
	r.sched.ScheduleOne(r.ctx)
	r.CycleTime += time.Since(start)

	obs := r.obs
	if p == nil {
		if p = obs.pod; p == nil {
			return scenario.PodResult{}, errors.New("upstream: the cycle popped no pod")
		}
	}
	key := p.Namespace + "/" + p.Name
	res := scenario.PodResult{Pod: key}
	if obs.suggested != "" {
		if err := r.waitBound(p, key, obs); err != nil {
			return res, err
		}
	}
	obs.mu.Lock()
	failure := obs.failure
	obs.mu.Unlock()
	if failure != nil {
		res.Message = failure.Message()
		if err := r.retire(p, key, res.Message, queueSettled); err != nil {
			return res, err
		}
		obs.mu.Lock()
		res.NominatedNode = obs.nominated
		obs.mu.Unlock()
		// Preemption has finished (retire waited for it): its events name the victims.
		for _, e := range r.events.snapshot()[eventsBefore:] {
			if e.Reason == "Preempted" {
				res.Victims = append(res.Victims, e.Regarding)
			}
		}
		sort.Strings(res.Victims)
	} else {
		r.mu.Lock()
		res.Node = r.bindings[key]
		r.mu.Unlock()
	}
	r.report(obs, &res)
	return res, nil
}

// waitBound waits for the asynchronous binding cycle to end (the Scheduled
// event, or a binding failure) and for the informer to confirm the pod in the
// cache, so the next cycle's snapshot holds it as an ordinary pod.
func (r *Runner) waitBound(p *v1.Pod, key string, obs *observation) error {
	if err := r.waitFor("binding of "+key, func() bool {
		if _, ok := r.events.last(key, "Scheduled"); ok {
			return true
		}
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return obs.failure != nil
	}); err != nil {
		return err
	}
	return r.waitFor("cache to confirm "+key, func() bool {
		assumed, err := r.sched.Cache.IsAssumedPod(p)
		pods, err2 := r.sched.Cache.PodCount()
		return err == nil && err2 == nil && !assumed && pods == r.boundCount()
	})
}

// retire removes an unschedulable pod after its one attempt, once preemption
// it may have started has finished deleting its victims. It first checks that
// the PodScheduled condition upstream wrote carries message.
func (r *Runner) retire(p *v1.Pod, key, message string, queueSettled func() bool) error {
	stored, err := r.client.CoreV1().Pods(p.Namespace).Get(r.ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("upstream: get unschedulable pod %s: %w", key, err)
	}
	if got := podScheduledMessage(stored); got != message {
		return fmt.Errorf("upstream: pod %s condition message %q differs from the failure status %q", key, got, message)
	}
	f := r.sched.Profiles[v1.DefaultSchedulerName]
	if err := r.waitFor("preemption by "+key+" to finish", func() bool {
		for _, pl := range f.PreEnqueuePlugins() {
			if pl.Name() == "DefaultPreemption" && !pl.PreEnqueue(r.ctx, p).IsSuccess() {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	if err := r.client.CoreV1().Pods(p.Namespace).Delete(r.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("upstream: delete unschedulable pod %s: %w", key, err)
	}
	return r.waitFor("queue and cache to settle after "+key, func() bool {
		count, err := r.sched.Cache.PodCount()
		return queueSettled() && err == nil && count == r.boundCount()
	})
}

// report fills the per-node verdicts, scores, top set and examined count.
func (r *Runner) report(obs *observation, res *scenario.PodResult) {
	obs.mu.Lock()
	defer obs.mu.Unlock()
	switch {
	case obs.fitError != nil:
		statuses := obs.fitError.Diagnosis.NodeToStatus
		res.Examined = statuses.Len()
		if r.SkipNodeVerdicts {
			return
		}
		res.Nodes = map[string]scenario.NodeVerdict{}
		for _, name := range r.nodeNames {
			res.Nodes[name] = toNodeVerdict(verdictOf(statuses.Get(name), obs.preFilterPlugins))
		}
		return
	case obs.scheduleErr != nil:
		return
	}
	res.Examined = obs.evaluated
	res.TopNodes = topNodes(obs.scores)
	if r.SkipNodeVerdicts {
		return
	}
	res.Nodes = map[string]scenario.NodeVerdict{}
	for name, status := range obs.filtered {
		res.Nodes[name] = toNodeVerdict(verdictOf(status, obs.preFilterPlugins))
	}
	if obs.preFilterResult != nil && !obs.preFilterResult.AllNodes() {
		// Upstream gives nodes outside the PreFilterResult this absent status
		// (findNodesThatFitPod); the Diagnosis holding it is dropped on success.
		absent := fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", obs.preFilterPlugins))
		for _, name := range r.nodeNames {
			if !obs.preFilterResult.NodeNames.Has(name) {
				res.Nodes[name] = toNodeVerdict(verdictOf(absent, obs.preFilterPlugins))
			}
		}
	}
	if len(obs.scores) == 0 {
		res.Nodes[obs.feasibleOnly] = scenario.NodeVerdict{}
		return
	}
	for _, s := range obs.scores {
		v := scenario.NodeVerdict{Total: s.TotalScore, Scores: map[string]int64{}}
		for _, ps := range s.Scores {
			v.Scores[ps.Name] = ps.Score
		}
		res.Nodes[s.Name] = v
	}
}

func podScheduledMessage(p *v1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return c.Message
		}
	}
	return ""
}

func toNodeVerdict(v verdict) scenario.NodeVerdict {
	return scenario.NodeVerdict{Plugin: v.plugin, Reasons: v.reasons, Code: v.code}
}

// admit returns a copy of pod as the API server would store it, for the
// fields the scheduler reads: schedulerName defaulting, a UID, and priority
// resolution from PriorityClasses (the Priority admission plugin).
func (r *Runner) admit(pod *v1.Pod) *v1.Pod {
	p := pod.DeepCopy()
	if p.Namespace == "" {
		p.Namespace = metav1.NamespaceDefault
	}
	if p.UID == "" {
		p.UID = types.UID("uid-" + p.Namespace + "-" + p.Name)
	}
	if p.Spec.SchedulerName == "" {
		p.Spec.SchedulerName = v1.DefaultSchedulerName
	}
	if p.Spec.Priority == nil {
		var value int32
		var policy *v1.PreemptionPolicy
		if pc, ok := r.priorityClasses[p.Spec.PriorityClassName]; ok && p.Spec.PriorityClassName != "" {
			value, policy = pc.Value, pc.PreemptionPolicy
		} else if p.Spec.PriorityClassName == "" {
			for _, name := range sortedKeys(r.priorityClasses) {
				if pc := r.priorityClasses[name]; pc.GlobalDefault {
					p.Spec.PriorityClassName = pc.Name
					value, policy = pc.Value, pc.PreemptionPolicy
					break
				}
			}
		}
		p.Spec.Priority = &value
		if p.Spec.PreemptionPolicy == nil && policy != nil {
			p.Spec.PreemptionPolicy = policy
		}
	}
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// waitFor spins until cond holds; informer deliveries are asynchronous but
// fast, so this yields first and only then sleeps briefly.
func (r *Runner) waitFor(what string, cond func() bool) error {
	const yields, pause = 100, 50 * time.Microsecond
	for i := 0; ; i++ {
		if cond() {
			return nil
		}
		if i < yields {
			runtime.Gosched()
			continue
		}
		if time.Duration(i-yields)*pause > waitTimeout {
			return fmt.Errorf("upstream: timed out waiting for %s", what)
		}
		time.Sleep(pause)
	}
}

// Close stops the scheduler and its informers.
func (r *Runner) Close() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	if r.sched != nil {
		r.sched.SchedulingQueue.Close()
	}
	if r.informers != nil {
		r.informers.Shutdown()
	}
}
