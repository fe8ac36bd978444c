// Package kubelet models the part of the kubelet that placement results
// show: admission of a bound pod (the GeneralPredicates of
// lifecycle.PredicateAdmitHandler), then the pod's start-up in virtual time
// — sandbox and pod IP, image pull, container start, readiness — with the
// pod status and the events the real kubelet writes.
package kubelet

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	affinityplugin "github.com/berth-sim/berth/internal/scheduler/plugins/nodeaffinity"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodename"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodeports"
	"github.com/berth-sim/berth/internal/scheduler/plugins/noderesources"
	"github.com/berth-sim/berth/internal/version"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Name is the controller's name and its events' source component.
const Name = "kubelet"

// Start-up timing, all in virtual time and all in whole seconds (object
// timestamps are persisted with one-second precision):
//
//	t0                 the kubelet admits the bound pod: startTime, hostIP
//	t0+SandboxDelay    sandbox ready: PodReadyToStartContainers, pod IP, Pulling
//	                   (with claims: t0 is when the last claim bound plus
//	                   VolumeAttachDelay, if later than admission; see volumes.go)
//	 +ImagePullDelay   image pulled (skipped when present and not Always)
//	                   containers created and started at once; phase Running
//	 +initialDelay     Ready, when a readinessProbe sets initialDelaySeconds
//
// Nodes that are not EC2 instances may have their own timing (NodeTiming).
const (
	SandboxDelay   = 1 * time.Second
	ImagePullDelay = 2 * time.Second
)

// Timing is the kubelet's start-up timing on one node: admission to
// sandbox ready, the image pull (when any container pulls), and containers
// created to started (0: at once).
type Timing struct {
	Sandbox, Pull, Start time.Duration
}

// NodeTiming, when set, gives the timing on nodes that are not EC2
// instances (Fargate's micro-VMs, docs/fargate.md#events-and-timing); ok
// false means the defaults above. It is set once, at start-up.
var NodeTiming func(node *corev1.Node) (t Timing, ok bool)

func timingOf(node *corev1.Node) Timing {
	if NodeTiming != nil {
		if t, ok := NodeTiming(node); ok {
			return t
		}
	}
	return Timing{Sandbox: SandboxDelay, Pull: ImagePullDelay}
}

// Event reasons (pkg/kubelet/events).
const (
	FailedCreatePodSandBoxReason = "FailedCreatePodSandBox"
	PullingImageReason           = "Pulling"
	PulledImageReason            = "Pulled"
	CreatedContainerReason       = "Created"
	StartedContainerReason       = "Started"
)

// IPAllocator returns, once per sync, the function that gives each pod
// started in that sync an address on its node, so an allocator can collect
// the addresses in use once rather than per pod.
type IPAllocator func(s *cluster.State) func(node *corev1.Node) (string, error)

var source = cluster.EventSource{Component: Name}

// Controller implements sim.Controller.
type Controller struct {
	allocator IPAllocator
	quiet     controllerutil.Quiet
	waits     waits
	// order is the sync's list of pods to visit, kept between syncs so
	// that a pass over 100,000 starting pods does not build it anew.
	order []sortEntry
	// started lists the bound, unfinished pods the kubelet had admitted
	// when the sync began (terminating ones too), for nodeInfos.get.
	started []*corev1.Pod
}

// New returns the kubelet model (one for all nodes) with a fallback address
// plan: unique addresses in 10.0.0.0/8 derived from the state's write counter.
func New() *Controller { return &Controller{} }

// NewWithIPAllocator returns the kubelet model handing out pod addresses
// with alloc (on EKS: the VPC CNI's addresses from the node's subnet).
func NewWithIPAllocator(alloc IPAllocator) *Controller { return &Controller{allocator: alloc} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync advances every bound, non-terminal pod as far as virtual time allows.
// Pods are handled in creation order, as HandlePodAdditions sorts them.
// Pods that are running, ready and on their spec's images have nothing
// left to do and are not sorted or visited: at 100,000 pods most of them
// are settled, and a sync only pays for the pods still starting.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	if c.quiet.Skip(s) {
		return false, nil
	}
	changed, err := c.sync(s)
	c.quiet.Done(s, changed || err != nil)
	return changed, err
}

func (c *Controller) sync(s *cluster.State) (bool, error) {
	var terminating []*corev1.Pod
	nodes := &nodeInfos{s: s, feat: features(s)}
	nodes.allocate = func(node *corev1.Node) (string, error) { return fallbackPodIP(s, node) }
	if c.allocator != nil {
		nodes.allocate = c.allocator(s)
	}
	c.waits.begin(s)
	for _, p := range s.Pods {
		if p.Spec.NodeName == "" || cluster.IsTerminal(p) {
			continue
		}
		if p.Status.StartTime != nil {
			c.started = append(c.started, p)
		}
		if p.DeletionTimestamp != nil {
			terminating = append(terminating, p)
			continue
		}
		if settled(p) {
			continue
		}
		waiting, rev, known := c.waits.check(s, p)
		if waiting {
			continue
		}
		if !known {
			rev = s.CreateRevisions[p.UID]
		}
		c.order = append(c.order, newSortEntry(p, rev))
	}
	// Creation timestamps first, then creation order, which breaks ties of
	// the second-resolution timestamps as the order the pods reached the
	// kubelet would (docs/ordering.md).
	sortEntries(c.order)
	c.waits.size = len(c.order)
	cluster.SortByCreation(s, terminating)
	nodes.started = c.started
	defer c.waits.end()
	defer c.dropOrder()
	changed := syncNodeHeartbeats(s)
	if syncTerminating(s, terminating) {
		changed = true
	}
	for _, e := range c.order {
		p := e.pod
		f := nodes.facts(p.Spec.NodeName)
		if f == nil {
			continue // no kubelet to run it: the pod stays Pending
		}
		if !f.reporting {
			// The kubelet is not posting status (the node lifecycle
			// controller owns the pod's Ready condition meanwhile).
			continue
		}
		nodes.waited = time.Time{}
		ch, err := syncPod(s, nodes, p, f)
		if err != nil {
			return changed, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		c.waits.note(p, f.node, nodes.waited, e.rev)
		changed = changed || ch
	}
	return changed, nil
}

// settled: the pod runs, is ready and runs its spec's images, so syncPod
// would leave it as it is.
func settled(pod *corev1.Pod) bool {
	if pod.Status.StartTime == nil || pod.Status.Phase != corev1.PodRunning || !controllerutil.IsPodReady(pod) {
		return false
	}
	if c := controllerutil.GetPodCondition(&pod.Status, corev1.PodReadyToStartContainers); c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	return !imagesChanged(pod)
}

// dropOrder ends a sync's use of its lists: the pods are let go, and the
// visit list itself once a sync visits nothing (the start-up is over).
func (c *Controller) dropOrder() {
	clear(c.started)
	c.started = c.started[:0]
	if len(c.order) == 0 {
		c.order = nil
		return
	}
	clear(c.order)
	c.order = c.order[:0]
}

// sortForKubelet orders pods by creation timestamp, then create revision,
// then key, with the sort keys read once per pod. The timestamp is compared
// as whole seconds and nanoseconds, which orders as time.Time.Compare does
// (TestSortForKubeletMatchesPlain) without decoding the time in every
// comparison.
func sortForKubelet(s *cluster.State, pods []*corev1.Pod) {
	entries := make([]sortEntry, len(pods))
	for i, p := range pods {
		entries[i] = newSortEntry(p, s.CreateRevisions[p.UID])
	}
	sortEntries(entries)
	for i := range entries {
		pods[i] = entries[i].pod
	}
}

// sortEntry is a pod with its sort keys; rev is its create revision.
type sortEntry struct {
	sec  int64
	nsec int64
	rev  int64
	pod  *corev1.Pod
}

func newSortEntry(p *corev1.Pod, rev int64) sortEntry {
	t := p.CreationTimestamp.Time
	return sortEntry{t.Unix(), int64(t.Nanosecond()), rev, p}
}

// sortEntries is sortForKubelet's order over entries whose keys are read.
func sortEntries(entries []sortEntry) {
	slices.SortFunc(entries, func(a, b sortEntry) int {
		if a.sec != b.sec {
			return cmp.Compare(a.sec, b.sec)
		}
		if a.nsec != b.nsec {
			return cmp.Compare(a.nsec, b.nsec)
		}
		if c := cmp.Compare(a.rev, b.rev); c != 0 {
			return c
		}
		// Pods of the same creation revision (none in practice) go in key
		// order, the key built only for them.
		return strings.Compare(cluster.Key(a.pod.Namespace, a.pod.Name), cluster.Key(b.pod.Namespace, b.pod.Name))
	})
}

// syncPod advances one pod on the node f describes (f.node is the pod's
// node, as the sync found it).
func syncPod(s *cluster.State, nodes *nodeInfos, pod *corev1.Pod, f *nodeFacts) (bool, error) {
	node := f.node
	changed := false
	if pod.Status.StartTime == nil {
		ni := nodes.get(f)
		pi, reason, msg, ok := admit(nodes.feat, ni, pod, node)
		if !ok {
			reject(s, pod, reason, msg)
			return true, nil
		}
		ni.AddPod(pi)
		start(s, pod, f.internalIP)
		changed = true
	}
	sandbox := controllerutil.GetPodCondition(&pod.Status, corev1.PodReadyToStartContainers)
	if sandbox == nil || sandbox.Status != corev1.ConditionTrue {
		volumesAt, ready := volumesReady(s, pod)
		if !ready {
			// Woken again by the change that binds the last claim.
			return changed, nil
		}
		from := pod.Status.StartTime.Time
		if volumesAt.After(from) {
			from = volumesAt
		}
		at := from.Add(f.timing.Sandbox)
		if s.Now.Before(at) {
			nodes.waitUntil(at)
			return changed, nil
		}
		if !volumesAt.IsZero() {
			recordAttached(s, pod, node)
		}
		if err := sandboxReady(s, nodes.allocate, pod, node); err != nil {
			// The pod stays ContainerCreating; a later sync retries, and
			// succeeds once an address is free (docs/pod-networking.md).
			return sandboxFailed(s, pod, err) || changed, nil
		}
		changed = true
		sandbox = controllerutil.GetPodCondition(&pod.Status, corev1.PodReadyToStartContainers)
	}
	if pod.Status.Phase == corev1.PodPending {
		t := f.timing
		pull := pullDelay(pod, node, t.Pull)
		at := sandbox.LastTransitionTime.Add(pull)
		if s.Now.Before(at) {
			nodes.waitUntil(at)
			return changed, nil
		}
		if t.Start > 0 {
			if !containersCreated(pod) {
				createContainers(s, nodes.feat.Version, pod, node, pull)
				changed = true
			}
			if at = at.Add(t.Start); s.Now.Before(at) {
				nodes.waitUntil(at)
				return changed, nil
			}
		}
		runContainers(s, nodes.feat.Version, pod, node, pull)
		changed = true
	}
	if pod.Status.Phase == corev1.PodRunning && restartChangedImages(s, pod) {
		changed = true
	}
	if !controllerutil.IsPodReady(pod) {
		at := runningSince(pod).Add(readinessDelay(pod))
		if s.Now.Before(at) {
			nodes.waitUntil(at)
			return changed, nil
		}
		markReady(s, pod)
		changed = true
	}
	return changed, nil
}

// wakeAt asks for a sync at `at`. Timers are per instant, not per pod: the
// sync finds every pod that is due, and thousands of pods starting together
// share one timer.
func wakeAt(s *cluster.State, at time.Time) {
	controllerutil.AddTimerOnce(s, cluster.Timer{At: at, Owner: Name, Settling: true})
}

// wakeAt is wakeAt once per instant and sync: the pods started together
// ask for the same few instants, and AddTimerOnce scans the timer queue.
// Timers are only dropped between syncs (sim.step), so an instant asked
// for earlier in this sync is still queued.
func (n *nodeInfos) wakeAt(at time.Time) {
	k := at.UnixNano()
	if n.hasWoken && n.lastWoken == k {
		// Pods started together ask for the same instant one after
		// another: no map lookup for them.
		return
	}
	if _, ok := n.woken[k]; !ok {
		if n.woken == nil {
			n.woken = map[int64]struct{}{}
		}
		n.woken[k] = struct{}{}
		wakeAt(n.s, at)
	}
	n.lastWoken, n.hasWoken = k, true
}

// admit runs the kubelet's GeneralPredicates against the pods the node has
// already admitted. NoExecute taints are left to the taint-eviction controller.
// The pod's info (its summed requests) is returned for the caller to add
// to the node once admitted, so it is computed once.
func admit(feat version.Features, ni *framework.NodeInfo, pod *corev1.Pod, node *corev1.Node) (pi *framework.PodInfo, reason, message string, ok bool) {
	pi = admissionInfo(pod, feat.PodLevelResources)
	if pod.Spec.NodeName != node.Name {
		return pi, nodename.Name, predicateFailure(nodename.Name, nodename.ErrReason), false
	}
	if match, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !match {
		return pi, affinityplugin.Name, predicateFailure(affinityplugin.Name, affinityplugin.ErrReasonPod), false
	}
	if nodeports.Conflict(framework.HostPorts(pod), ni) {
		return pi, nodeports.Name, predicateFailure(nodeports.Name, nodeports.ErrReason), false
	}
	if insufficient := noderesources.Fits(&pi.Requests, ni); len(insufficient) > 0 {
		r := insufficient[0]
		return pi, "OutOf" + string(r.ResourceName),
			fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d", r.ResourceName, r.Requested, r.Used, r.Capacity),
			false
	}
	return pi, "", "", true
}

// nodeInfos is what a sync knows of the nodes: per node, its facts and the
// pods its kubelet has admitted (built at the sync's first admission to
// the node, kept with its facts, and extended as pods are admitted).
type nodeInfos struct {
	s *cluster.State
	// admitted lists, per node, the pods its kubelet had admitted when the
	// sync began; built at the first admission, from started (the walk's).
	admitted map[string][]*corev1.Pod
	started  []*corev1.Pod
	allocate func(*corev1.Node) (string, error)
	// feat is the cluster version's features, read once per sync.
	feat version.Features
	// woken holds the instants (Unix nanoseconds) this sync asked to be
	// woken at; lastWoken is the latest asked for.
	woken     map[int64]struct{}
	lastWoken int64
	hasWoken  bool
	// nodes holds, per node name, what the sync reads of the node for each
	// of its pods (facts); nil for a name with no node.
	nodes map[string]*nodeFacts
	// waited is the instant the pod syncPod last visited waits for (zero:
	// it does not wait for a time).
	waited time.Time
}

// waitUntil: the pod syncPod visits has nothing to do before `at`.
func (n *nodeInfos) waitUntil(at time.Time) {
	n.wakeAt(at)
	n.waited = at
}

func (n *nodeInfos) get(f *nodeFacts) *framework.NodeInfo {
	if f.info != nil {
		return f.info
	}
	node := f.node
	if n.admitted == nil {
		// No pod has been admitted in this sync before (every admission
		// goes through get), so the pods the sync's walk found started
		// are still the admitted ones, but for the terminating pods
		// syncTerminating has removed since: those still here hold their
		// share of the node until their containers stop. (The walk
		// collects them so that the first admission does not walk every
		// pod again.)
		n.admitted = map[string][]*corev1.Pod{}
		for _, p := range n.started {
			if p.DeletionTimestamp != nil && n.s.Pods[cluster.Key(p.Namespace, p.Name)] != p {
				continue
			}
			n.admitted[p.Spec.NodeName] = append(n.admitted[p.Spec.NodeName], p)
		}
	}
	// Admission only sums requests and collects host ports, so the order
	// the admitted pods are added in does not matter.
	ni := framework.NewNodeInfo(node)
	for _, p := range n.admitted[node.Name] {
		ni.AddPod(admissionInfo(p, n.feat.PodLevelResources))
	}
	f.info = ni
	return ni
}

func predicateFailure(name, desc string) string {
	return fmt.Sprintf("Predicate %s failed: %s", name, desc)
}

// reject is the kubelet's rejectPod: a Warning event and phase Failed.
func reject(s *cluster.State, pod *corev1.Pod, reason, message string) {
	s.Record(source, podRef(pod, ""), corev1.EventTypeWarning, reason, message)
	pod.Status.Phase = corev1.PodFailed
	pod.Status.Reason = reason
	pod.Status.Message = "Pod was rejected: " + message
	pod.ResourceVersion = s.Bump()
	// The scheduler's informer lists only non-terminal pods: a pod turning
	// Failed leaves its cache as a Pod/Delete.
	s.PodDeleted(pod)
}

// start is the kubelet's first status for an admitted pod on a node whose
// InternalIP is ip ("": none).
func start(s *cluster.State, pod *corev1.Pod, ip string) {
	now := metav1.NewTime(s.Now)
	pod.Status.StartTime = &now
	if ip != "" {
		pod.Status.HostIP = ip
		pod.Status.HostIPs = []corev1.HostIP{{IP: ip}}
	}
	startConditions(pod, s.Now, unreadyMessage(pod))
	pod.Status.ContainerStatuses = nil
	if n := len(pod.Spec.Containers); n > 0 {
		// One slice of its final length (the appends grew it step by step).
		pod.Status.ContainerStatuses = make([]corev1.ContainerStatus, n)
	}
	for i, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses[i] = corev1.ContainerStatus{
			Name:  c.Name,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
			Image: c.Image,
		}
	}
	pod.ResourceVersion = s.Bump()
}

// sandboxReady: the pod network is up, so the pod has its IP, and image
// pulls begin.
func sandboxReady(s *cluster.State, allocate func(*corev1.Node) (string, error), pod *corev1.Pod, node *corev1.Node) error {
	ip := pod.Status.HostIP
	if !pod.Spec.HostNetwork {
		var err error
		if ip, err = allocate(node); err != nil {
			return err
		}
	}
	if ip != "" {
		pod.Status.PodIP = ip
		pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	}
	setConditions(pod, s.Now, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue})
	for _, c := range pod.Spec.Containers {
		if needsPull(c, node) {
			s.Record(source, podRef(pod, c.Name), corev1.EventTypeNormal, PullingImageReason, pullMessage(pullingMessage, c.Image, 0))
		}
	}
	pod.ResourceVersion = s.Bump()
	return nil
}

// sandboxFailed records the kubelet's FailedCreatePodSandBox warning for the
// CNI plugin's error, as containerd and the kubelet wrap it, with a
// sandbox ID drawn from the state's random source. Only the first failure is
// recorded: berth retries on every sync rather than on the kubelet's backoff,
// and a failed retry that changed nothing must not count as progress.
func sandboxFailed(s *cluster.State, pod *corev1.Pod, err error) bool {
	ref := podRef(pod, "")
	if s.HasEvent(Name, corev1.EventTypeWarning, FailedCreatePodSandBoxReason, ref) {
		return false
	}
	s.Record(source, ref, corev1.EventTypeWarning, FailedCreatePodSandBoxReason,
		fmt.Sprintf("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox %q: %v", hex64(s), err))
	return true
}

func markReady(s *cluster.State, pod *corev1.Pod) {
	for i := range pod.Status.ContainerStatuses {
		pod.Status.ContainerStatuses[i].Ready = true
	}
	setConditions(pod, s.Now,
		corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue})
	pod.ResourceVersion = s.Bump()
	// A pod turning ready matters to the workload controllers, not the scheduler.
}

func runningSince(pod *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil && cs.State.Running.StartedAt.After(t) {
			t = cs.State.Running.StartedAt.Time
		}
	}
	return t
}

// readinessDelay is the longest readinessProbe.initialDelaySeconds of the
// pod's containers: the first probe is taken to succeed.
func readinessDelay(pod *corev1.Pod) time.Duration {
	var d time.Duration
	for _, c := range pod.Spec.Containers {
		if c.ReadinessProbe != nil {
			d = max(d, time.Duration(c.ReadinessProbe.InitialDelaySeconds)*time.Second)
		}
	}
	return d
}

// nodeReporting is false while the node's Ready condition is False or
// Unknown: the kubelet's status updates stop, so it neither starts pods nor
// turns them Ready again behind the node lifecycle controller's back. A node
// without a Ready condition is taken as reporting.
func nodeReporting(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return true
}

func nodeInternalIP(node *corev1.Node) string {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// fallbackPodIP derives an address from the state's write counter, which
// never repeats: unique and O(1), for wiring without a VPC model.
func fallbackPodIP(s *cluster.State, _ *corev1.Node) (string, error) {
	n := s.ResourceVersion & 0xffffff
	return netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)}).String(), nil
}
