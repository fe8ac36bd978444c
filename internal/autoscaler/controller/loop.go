package controller

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/autoscaler/config"
	"github.com/berth-sim/berth/internal/autoscaler/nodegroups"
	"github.com/berth-sim/berth/internal/autoscaler/scaledown"
	"github.com/berth-sim/berth/internal/autoscaler/scaleup"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	"github.com/berth-sim/berth/internal/controllers/disruption"
	"github.com/berth-sim/berth/internal/fargate"
)

// PriorityConfigMap is the priority expander's ConfigMap.
const PriorityConfigMap = "cluster-autoscaler-priority-expander"

// pendingPods are the pods the scheduler marked unschedulable, oldest
// first. Pods of fargate-scheduler are left out: no node group can help
// them (docs/cluster-autoscaler.md#scale-up).
func pendingPods(s *cluster.State) []*corev1.Pod {
	var out []*corev1.Pod
	for _, k := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[k]
		if p.Spec.NodeName != "" || cluster.IsTerminal(p) || p.DeletionTimestamp != nil || p.Spec.SchedulerName == fargate.SchedulerName {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				out = append(out, p)
				break
			}
		}
	}
	cluster.SortByCreation(s, out)
	return out
}

// loop is one run of cluster-autoscaler's main loop.
type loop struct {
	s      *cluster.State
	d      *appsv1.Deployment
	opts   config.Options
	groups []nodegroups.Group
	scaled bool
}

func runOnce(s *cluster.State, d *appsv1.Deployment, opts config.Options) error {
	groups, missing := nodegroups.Discover(s, opts)
	for _, name := range missing {
		msg := fmt.Sprintf("--nodes names node group %q, which no Auto Scaling group of cluster %q has", name, s.Info.Name)
		if !s.HasEvent(Name, corev1.EventTypeWarning, "UnknownNodeGroup", cluster.Regarding("Deployment", "apps/v1", d)) {
			s.Record(source, cluster.Regarding("Deployment", "apps/v1", d), corev1.EventTypeWarning, "UnknownNodeGroup", msg)
		}
	}
	l := &loop{s: s, d: d, opts: opts, groups: groups}
	l.updateInstances()
	if !l.clusterHealthy() {
		// cluster-autoscaler stops here while too many nodes are unready.
		s.Record(source, regardingStatus(s), corev1.EventTypeWarning, "ClusterUnhealthy", "Cluster is unhealthy")
		s.Autoscaler.Unneeded = nil
		if opts.WriteStatusConfigMap {
			writeStatus(l)
		}
		return nil
	}
	l.dropFailedLaunches()
	if err := l.scaleUp(); err != nil {
		return err
	}
	if !l.scaled {
		if err := l.scaleDown(); err != nil {
			return err
		}
	}
	if opts.WriteStatusConfigMap {
		writeStatus(l)
	}
	return nil
}

// PlanGroups is the scale-up planner's view of the discovered groups:
// sizes, template and backoff, as the loop builds it each scan
// (docs/cluster-autoscaler.md#scale-up). berth why asks through it too.
func PlanGroups(s *cluster.State, found []nodegroups.Group, opts config.Options) []scaleup.Group {
	var groups []scaleup.Group
	for i, g := range found {
		ng := findGroup(s, g.NodeGroup)
		if ng == nil {
			continue
		}
		tmpl, err := nodegroups.TemplateFor(s, g, i)
		sg := scaleup.Group{Name: g.Name, MinSize: g.MinSize, MaxSize: g.MaxSize, Target: ng.DesiredSize,
			Registered: registered(s, g)}
		if err == nil && (tmpl.FromNode != "" || opts.ScaleUpFromZero) {
			sg.Template, sg.TemplatePods = tmpl.Node, tmpl.Pods
		}
		if _, ok := backedOff(s, g.Name); ok {
			sg.Backoff = true
		}
		groups = append(groups, sg)
	}
	return groups
}

// ngOf returns the state's node group behind an ASG.
func (l *loop) ngOf(g nodegroups.Group) *cluster.NodeGroup { return findGroup(l.s, g.NodeGroup) }

func (l *loop) scaleUp() error {
	s := l.s
	pending := oldEnough(s, pendingPods(s), l.opts.NewPodScaleUpDelay)
	judged := map[string]bool{}
	for _, p := range pending {
		judged[string(p.UID)] = true
	}
	s.Autoscaler.Judged = judged
	if len(pending) == 0 {
		return nil
	}
	groups := PlanGroups(s, l.groups, l.opts)
	prios := ""
	if cm := s.ConfigMaps[cluster.Key(l.opts.Namespace, PriorityConfigMap)]; cm != nil {
		prios = cm.Data["priorities"]
	}
	res, err := scaleup.Plan(scaleup.Input{State: s, Pending: pending, Groups: groups, Options: l.opts,
		Priorities: prios, Seed: s.Seed ^ s.Now.UnixNano()})
	if err != nil {
		return err
	}
	if len(res.Increases) == 0 {
		for _, r := range res.NoScaleUp {
			s.Record(source, cluster.Regarding("Pod", "v1", r.Pod), corev1.EventTypeNormal, "NotTriggerScaleUp", scaleup.NotTriggeredMessage(r))
		}
		return nil
	}
	for _, inc := range res.Increases {
		var ng *cluster.NodeGroup
		for _, g := range l.groups {
			if g.Name == inc.Group {
				ng = l.ngOf(g)
			}
		}
		registerScaleUp(s, inc.Group, inc.To-inc.From)
		noteActivity(&s.Autoscaler.LastGroupScaleUp, ng.Name, s.Now)
		s.Record(source, regardingStatus(s), corev1.EventTypeNormal, "ScaledUpGroup",
			fmt.Sprintf("Scale-up: setting group %s size to %d instead of %d (max: %d)", inc.Group, inc.To, inc.From, inc.Max))
		ng.DesiredSize = inc.To
		launch(s, inc.Group, ng, inc.To-inc.From)
	}
	msg := scaleup.TriggeredMessage(res.Increases)
	for _, p := range res.Triggered {
		s.Record(source, cluster.Regarding("Pod", "v1", p), corev1.EventTypeNormal, "TriggeredScaleUp", msg)
	}
	s.Autoscaler.LastScaleUp = s.Now
	l.scaled = true
	return nil
}

// registered counts the group's nodes that are not being removed.
func registered(s *cluster.State, g nodegroups.Group) int {
	n := 0
	for _, node := range g.Nodes(s) {
		if _, deleting := s.Autoscaler.Deleting[node.Name]; !deleting {
			n++
		}
	}
	return n
}

// inCooldown tells whether a scale-down delay is still running.
func (l *loop) inCooldown() bool {
	as, now, o := &l.s.Autoscaler, l.s.Now, l.opts
	return (!as.LastScaleUp.IsZero() && now.Before(as.LastScaleUp.Add(o.ScaleDownDelayAfterAdd))) ||
		(!as.LastScaleDown.IsZero() && now.Before(as.LastScaleDown.Add(o.ScaleDownDelayAfterDelete))) ||
		(!as.LastScaleDownFailure.IsZero() && now.Before(as.LastScaleDownFailure.Add(o.ScaleDownDelayAfterFailure)))
}

func (l *loop) scaleDown() error {
	s := l.s
	if !l.opts.ScaleDownEnabled || l.inCooldown() || len(s.Autoscaler.Deleting) > 0 {
		return nil
	}
	var groups []scaledown.Group
	for _, g := range l.groups {
		ng := l.ngOf(g)
		sg := scaledown.Group{Name: g.Name, MinSize: g.MinSize, Target: ng.DesiredSize}
		for _, n := range g.Nodes(s) {
			sg.Nodes = append(sg.Nodes, n.Name)
		}
		groups = append(groups, sg)
	}
	cands, _, err := scaledown.Candidates(scaledown.Input{State: s, Groups: groups, Options: l.opts})
	if err != nil {
		return err
	}
	since := map[string]time.Time{}
	var due []scaledown.Candidate
	for _, c := range cands {
		t, ok := s.Autoscaler.Unneeded[c.Node]
		if !ok {
			t = s.Now
		}
		since[c.Node] = t
		if !s.Now.Before(t.Add(l.opts.ScaleDownUnneededTime)) {
			due = append(due, c)
		}
	}
	s.Autoscaler.Unneeded = since
	if len(due) == 0 {
		return nil
	}
	var empty []scaledown.Candidate
	for _, c := range due {
		if len(c.PodsToMove) == 0 && len(empty) < l.opts.MaxScaleDownParallelism {
			empty = append(empty, c)
		}
	}
	if len(empty) > 0 {
		for _, c := range empty {
			s.Record(source, regardingStatus(s), corev1.EventTypeNormal, "ScaleDownEmpty",
				fmt.Sprintf("Scale-down: removing empty node %q", c.Node))
			l.remove(c, false)
		}
		return nil
	}
	c := due[0]
	u := utilInfo(s, c.Node, l.opts)
	s.Record(source, regardingStatus(s), corev1.EventTypeNormal, "ScaleDown",
		fmt.Sprintf("Scale-down: removing node %s, utilization: %s, pods to reschedule: %s", c.Node, u, podNames(c.PodsToMove)))
	l.remove(c, true)
	return nil
}

// utilInfo prints cluster-autoscaler's utilization record as %v does:
// {cpu memory gpu resource utilization}.
func utilInfo(s *cluster.State, node string, o config.Options) string {
	n := s.Nodes[node]
	pods := s.PodsOnNode(node)
	cpuOnly, memOnly := o, o
	cpu := scaledown.Utilization(nodeWith(n, corev1.ResourceCPU), pods, cpuOnly)
	mem := scaledown.Utilization(nodeWith(n, corev1.ResourceMemory), pods, memOnly)
	name, u := corev1.ResourceCPU, cpu
	if mem > cpu {
		name, u = corev1.ResourceMemory, mem
	}
	return fmt.Sprintf("{%v %v 0 %s %v}", cpu, mem, name, u)
}

// nodeWith is a copy of n whose allocatable has only one resource.
func nodeWith(n *corev1.Node, r corev1.ResourceName) *corev1.Node {
	cp := n.DeepCopy()
	cp.Status.Allocatable = corev1.ResourceList{r: n.Status.Allocatable[r]}
	return cp
}

func podNames(pods []*corev1.Pod) string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return strings.Join(names, ",")
}

// remove taints the node, evicts its pods and leaves the termination to
// finishDeletions after --node-delete-delay-after-taint.
func (l *loop) remove(c scaledown.Candidate, drain bool) {
	s := l.s
	node := s.Nodes[c.Node]
	old := node.DeepCopy()
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: nodegroups.TaintToBeDeleted,
		Value: fmt.Sprint(s.Now.Unix()), Effect: corev1.TaintEffectNoSchedule})
	node.ResourceVersion = s.Bump()
	s.NodeUpdated(old, node)
	ref := cluster.Regarding("Node", "v1", node)
	s.Record(source, ref, corev1.EventTypeNormal, "ScaleDown", "marked the node as toBeDeleted/unschedulable")
	evict := append([]*corev1.Pod(nil), c.PodsToMove...)
	if (drain && l.opts.DaemonSetEvictionForOccupiedNodes) || (!drain && l.opts.DaemonSetEvictionForEmptyNodes) {
		for _, p := range s.PodsOnNode(c.Node) {
			if isDaemon(p) {
				evict = append(evict, p)
			}
		}
	}
	for _, p := range evict {
		s.Record(source, cluster.Regarding("Pod", "v1", p), corev1.EventTypeNormal, "ScaleDown", "deleting pod for node scale down")
		if err := disruption.Evict(s, p); err != nil && !isDaemon(p) {
			s.Record(source, ref, corev1.EventTypeWarning, "ScaleDownFailed", "failed to drain and delete node: "+err.Error())
			untaint(s, node)
			s.Autoscaler.LastScaleDownFailure = s.Now
			delete(s.Autoscaler.Unneeded, c.Node)
			return
		}
	}
	if s.Autoscaler.Deleting == nil {
		s.Autoscaler.Deleting = map[string]cluster.NodeDeletion{}
	}
	at := s.Now.Add(l.opts.NodeDeleteDelayAfterTaint)
	s.Autoscaler.Deleting[c.Node] = cluster.NodeDeletion{NodeGroup: groupOfNode(node), At: at, Drain: drain}
	delete(s.Autoscaler.Unneeded, c.Node)
	s.AddTimer(cluster.Timer{At: at, Owner: Name, Settling: true})
}

func isDaemon(p *corev1.Pod) bool {
	for _, r := range p.OwnerReferences {
		if r.Controller != nil && *r.Controller && r.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

func groupOfNode(n *corev1.Node) string { return nodegroups.GroupOf(n) }

func untaint(s *cluster.State, node *corev1.Node) {
	old := node.DeepCopy()
	var keep []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Key != nodegroups.TaintToBeDeleted {
			keep = append(keep, t)
		}
	}
	node.Spec.Taints = keep
	node.ResourceVersion = s.Bump()
	s.NodeUpdated(old, node)
}

// finishDeletions terminates the instances of drained nodes that are due,
// decrementing their group's desired capacity.
func (c *Controller) finishDeletions(s *cluster.State) bool {
	as := &s.Autoscaler
	changed := false
	for _, name := range cluster.SortedKeys(as.Deleting) {
		del := as.Deleting[name]
		if s.Now.Before(del.At) {
			s.AddTimer(cluster.Timer{At: del.At, Owner: Name, Settling: true})
			continue
		}
		if until, waiting := evictedPodsTerminating(s, name); waiting && s.Now.Before(del.At.Add(maxDrainWait)) {
			// The drain waits for the evicted pods to be gone
			// (docs/node-lifecycle.md#graceful-termination).
			controllerutil.AddTimerOnce(s, cluster.Timer{At: until, Owner: Name, Settling: true})
			continue
		}
		if node := s.Nodes[name]; node != nil {
			s.Record(source, cluster.Regarding("Node", "v1", node), corev1.EventTypeNormal, "ScaleDown", "nodes removed by cluster autoscaler")
			if del.Drain {
				s.Record(source, regardingStatus(s), corev1.EventTypeNormal, "ScaleDown", fmt.Sprintf("Scale-down: node %s removed with drain", name))
			} else {
				s.Record(source, regardingStatus(s), corev1.EventTypeNormal, "ScaleDownEmpty", fmt.Sprintf("Scale-down: empty node %s removed", name))
			}
			s.DeleteNode(name)
		}
		if ng := findGroup(s, del.NodeGroup); ng != nil && ng.DesiredSize > 0 {
			ng.DesiredSize--
			noteActivity(&as.LastGroupScaleDown, ng.Name, s.Now)
		}
		delete(as.Deleting, name)
		as.LastScaleDown = s.Now
		changed = true
	}
	return changed
}

// maxDrainWait is how long cluster-autoscaler waits for evicted pods to
// terminate: --max-graceful-termination-sec (600 s) plus its 30 s eviction
// headroom.
const maxDrainWait = 630 * time.Second

// evictedPodsTerminating reports whether pods other than DaemonSet pods are
// still Terminating on the node, and the latest end of their grace periods.
func evictedPodsTerminating(s *cluster.State, node string) (time.Time, bool) {
	var until time.Time
	found := false
	for _, p := range s.PodsOnNode(node) {
		if p.DeletionTimestamp == nil || isDaemon(p) {
			continue
		}
		found = true
		if p.DeletionTimestamp.After(until) {
			until = p.DeletionTimestamp.Time
		}
	}
	if until.Before(s.Now) {
		until = s.Now.Add(time.Second)
	}
	return until, found
}

// noteActivity records when a group last changed size.
func noteActivity(m *map[string]time.Time, group string, at time.Time) {
	if *m == nil {
		*m = map[string]time.Time{}
	}
	(*m)[group] = at
}
