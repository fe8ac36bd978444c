package upstream

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// observingFramework is the profile's real framework with three read-only
// taps. The scheduler calls these methods through the framework.Framework
// interface, while plugins (preemption's dry runs included) hold the inner
// implementation as their Handle, so only the scheduling cycle itself is
// observed.
type observingFramework struct {
	framework.Framework
	runner *Runner
}

func (f *observingFramework) RunPreFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	res, status, unscheduled := f.Framework.RunPreFilterPlugins(ctx, state, pod)
	f.runner.obs.mu.Lock()
	f.runner.obs.preFilterResult = res
	f.runner.obs.preFilterPlugins = sets.List(unscheduled)
	f.runner.obs.mu.Unlock()
	return res, status, unscheduled
}

func (f *observingFramework) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	status := f.Framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo)
	if !status.IsSuccess() {
		f.runner.obs.mu.Lock()
		f.runner.obs.filtered[nodeInfo.Node().Name] = status
		f.runner.obs.mu.Unlock()
	}
	return status
}

func (f *observingFramework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	scores, status := f.Framework.RunScorePlugins(ctx, state, pod, nodes)
	f.runner.obs.mu.Lock()
	f.runner.obs.scores = scores
	f.runner.obs.mu.Unlock()
	return scores, status
}

// observation is what one scheduling cycle revealed. Filter runs on 16
// goroutines, hence the mutex.
type observation struct {
	mu               sync.Mutex
	preFilterResult  *fwk.PreFilterResult
	preFilterPlugins []string
	filtered         map[string]*fwk.Status
	scores           []fwk.NodePluginScores
	// fitError is set when SchedulePod found no feasible node.
	fitError *framework.FitError
	// scheduleErr is any other error of SchedulePod (e.g. no nodes at all).
	scheduleErr error
	// feasibleOnly is upstream's own pick; suggested is the node the cycle
	// went on with (the aligned one when alignment applied).
	feasibleOnly string
	suggested    string
	evaluated    int
	// failure is the status handed to the failure handler; its Message() is
	// exactly the PodScheduled condition message.
	failure *fwk.Status
	// nominated is the node the failure handler was told to nominate.
	nominated string
	// pod is the pod the queue popped for the cycle.
	pod *v1.Pod
}

func newObservation() *observation {
	return &observation{filtered: map[string]*fwk.Status{}}
}

// topNodes returns the sorted names sharing the maximal total score.
func topNodes(scores []fwk.NodePluginScores) []string {
	if len(scores) == 0 {
		return nil
	}
	best := scores[0].TotalScore
	for _, s := range scores[1:] {
		if s.TotalScore > best {
			best = s.TotalScore
		}
	}
	var top []string
	for _, s := range scores {
		if s.TotalScore == best {
			top = append(top, s.Name)
		}
	}
	sort.Strings(top)
	return top
}

// verdictOf converts a rejecting status. A node excluded by a PreFilterResult
// carries a status without a plugin; it is attributed to the PreFilter
// plugins that narrowed the node set (comma-joined, sorted).
func verdictOf(status *fwk.Status, preFilterPlugins []string) verdict {
	plugin := status.Plugin()
	if plugin == "" {
		plugin = strings.Join(preFilterPlugins, ",")
	}
	return verdict{plugin: plugin, reasons: append([]string(nil), status.Reasons()...), code: status.Code().String()}
}

type verdict struct {
	plugin  string
	reasons []string
	code    string
}

// recordedEvent is one event as the events.k8s.io recorder would write it.
type recordedEvent struct {
	Regarding string // namespace/name of the object
	Type      string
	Reason    string
	Action    string
	Note      string
}

// eventLog captures events synchronously, in emission order, instead of
// sending them through a broadcaster (which is asynchronous and aggregates).
type eventLog struct {
	mu     sync.Mutex
	events []recordedEvent
}

func (l *eventLog) recorderFactory(string) events.EventRecorderLogger {
	return &captureRecorder{log: l}
}

func (l *eventLog) snapshot() []recordedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]recordedEvent(nil), l.events...)
}

// last returns the newest event regarding key with the given reason.
func (l *eventLog) last(key, reason string) (recordedEvent, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.events) - 1; i >= 0; i-- {
		if e := l.events[i]; e.Regarding == key && e.Reason == reason {
			return e, true
		}
	}
	return recordedEvent{}, false
}

type captureRecorder struct{ log *eventLog }

func (r *captureRecorder) Eventf(regarding runtime.Object, _ runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	key := ""
	if pod, ok := regarding.(*v1.Pod); ok {
		key = pod.Namespace + "/" + pod.Name
	}
	// The real recorder formats the note the same way (note is a format).
	e := recordedEvent{Regarding: key, Type: eventtype, Reason: reason, Action: action, Note: fmt.Sprintf(note, args...)}
	r.log.mu.Lock()
	r.log.events = append(r.log.events, e)
	r.log.mu.Unlock()
}

func (r *captureRecorder) WithLogger(klog.Logger) events.EventRecorderLogger { return r }
