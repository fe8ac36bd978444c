package controller

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/autoscaler/config"
	"github.com/berth-sim/berth/internal/autoscaler/nodegroups"
	"github.com/berth-sim/berth/internal/aws"
	capnodegroups "github.com/berth-sim/berth/internal/capacity/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
)

// Error classes, codes and messages cluster-autoscaler records for a failed
// scale-up (docs/cluster-autoscaler.md#failed-scale-ups-and-backoff).
const (
	ErrorClassOutOfResources = "OutOfResource"
	ErrorClassOther          = "Other"
	// ErrorCodePlaceholder is the AWS provider's code for an instance its
	// ASG could not launch; ErrorMessagePlaceholder its message.
	ErrorCodePlaceholder    = "placeholder-cannot-be-fulfilled"
	ErrorMessagePlaceholder = "AWS cannot provision any more instances for this node group"
	// ErrorCodeTimeout is the code of a scale-up whose nodes did not
	// register within --max-node-provision-time.
	ErrorCodeTimeout = "timeout"
)

// launch starts n instances of the group. The ASG puts each where its
// "balanced best effort" zone balancing says: the zone with the fewest
// instances of the group, skipping zones where EC2 has no capacity for the
// group's instance type (`berth karpenter unavailable`). With no zone left
// the ASG's launch activity fails: the instance is recorded as failed and
// never comes up (docs/cluster-autoscaler.md#failed-scale-ups-and-backoff).
func launch(s *cluster.State, asg string, ng *cluster.NodeGroup, n int) {
	zones := capnodegroups.Zones(s.Info, *ng)
	counts := map[string]int{}
	for _, node := range capnodegroups.GroupNodes(s, ng.Name) {
		counts[node.Labels[corev1.LabelTopologyZone]]++
	}
	for _, inst := range s.Autoscaler.Launching {
		if inst.NodeGroup == ng.Name && !inst.Failed {
			counts[inst.Zone]++
		}
	}
	itype := ""
	if it, err := capnodegroups.InstanceType(*ng); err == nil {
		itype = it.Name
	}
	capacityType := "on-demand"
	if ng.Spot {
		capacityType = "spot"
	}
	for i := 0; i < n; i++ {
		inst := cluster.ASGInstance{NodeGroup: ng.Name, ID: instanceID(s, asg), ReadyAt: s.Now.Add(BootDelay)}
		inst.Zone, inst.Failed = placement(s, zones, counts, itype, capacityType)
		if !inst.Failed {
			counts[inst.Zone]++
			s.AddTimer(cluster.Timer{At: inst.ReadyAt, Owner: Name, Settling: true})
		}
		s.Autoscaler.Launching = append(s.Autoscaler.Launching, inst)
	}
}

// placement is the zone the ASG launches the next instance in, and whether
// every zone lacked capacity (then the zone is the one it tried first).
func placement(s *cluster.State, zones []string, counts map[string]int, itype, capacityType string) (string, bool) {
	if len(zones) == 0 {
		return "", false
	}
	tried := map[string]bool{}
	first := ""
	for range zones {
		var left []string
		for _, z := range zones {
			if !tried[z] {
				left = append(left, z)
			}
		}
		z := capnodegroups.NextZone(left, counts)
		if first == "" {
			first = z
		}
		if !noCapacity(s, itype, z, capacityType) {
			return z, false
		}
		tried[z] = true
	}
	return first, true
}

// noCapacity reports whether EC2 has no capacity for the offering now, as
// the user declared with `berth karpenter unavailable`: the same outage
// stops Karpenter's launches and the ASGs'.
func noCapacity(s *cluster.State, itype, zone, capacityType string) bool {
	if s.Karpenter.AWS == nil {
		return false
	}
	for _, n := range s.Karpenter.AWS.NoCapacity {
		if n.InstanceType == itype && n.Zone == zone && n.CapacityType == capacityType && n.Active(s.Now) {
			return true
		}
	}
	return false
}

// instanceID derives an instance id from the group, the clock and the
// launch's position, without drawing from the state's random source, so
// that launches do not shift the names drawn later.
func instanceID(s *cluster.State, asg string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d/%d", asg, s.Now.UnixNano(), len(s.Autoscaler.Launching))))
	return fmt.Sprintf("i-0%016x", binary.BigEndian.Uint64(h[:8]))
}

// fakeNodeName is the name cluster-autoscaler gives an instance without a
// node: its provider ID.
func fakeNodeName(inst cluster.ASGInstance) string { return aws.ProviderID(inst.Zone, inst.ID) }

// registerScaleUp records a scale-up of delta nodes as cluster-autoscaler's
// cluster state does: a new request starts now; a later one adds to it and
// restarts its clock.
func registerScaleUp(s *cluster.State, asg string, delta int) {
	as := &s.Autoscaler
	req, found := as.ScaleUpRequests[asg]
	if !found {
		if delta > 0 {
			if as.ScaleUpRequests == nil {
				as.ScaleUpRequests = map[string]cluster.ScaleUpRequest{}
			}
			as.ScaleUpRequests[asg] = cluster.ScaleUpRequest{Time: s.Now, Increase: delta}
		}
		return
	}
	if req.Increase+delta <= 0 {
		delete(as.ScaleUpRequests, asg)
		return
	}
	req.Increase += delta
	if delta > 0 {
		req.Time = s.Now
	}
	as.ScaleUpRequests[asg] = req
}

// backoff backs the group off after a failed scale-up, as
// cluster-autoscaler's exponential backoff does: the first failure (or one
// while a backoff runs) for --initial-node-group-backoff-duration, a
// failure after the backoff ran out for twice the last duration, at most
// --max-node-group-backoff-duration.
func backoff(s *cluster.State, opts config.Options, asg, class, code, message string) {
	as := &s.Autoscaler
	d := opts.InitialBackoff
	if b, found := as.Backoff[asg]; found {
		d = b.Duration
		if b.Until.Before(s.Now) {
			d = 2 * b.Duration
			if d > opts.MaxBackoff {
				d = opts.MaxBackoff
			}
		}
	}
	if as.Backoff == nil {
		as.Backoff = map[string]cluster.GroupBackoff{}
	}
	as.Backoff[asg] = cluster.GroupBackoff{Until: s.Now.Add(d), Duration: d, LastFailure: s.Now,
		ErrorClass: class, ErrorCode: code, ErrorMessage: message}
}

// backedOff returns the group's active backoff, if any.
func backedOff(s *cluster.State, asg string) (cluster.GroupBackoff, bool) {
	b, ok := s.Autoscaler.Backoff[asg]
	if !ok || b.Until.Before(s.Now) {
		return cluster.GroupBackoff{}, false
	}
	return b, true
}

// updateInstances is the start of cluster-autoscaler's loop for the ASGs'
// instances (docs/cluster-autoscaler.md#failed-scale-ups-and-backoff):
//
//  1. instances without a node are noted as unregistered;
//  2. backoff records older than --node-group-backoff-reset-timeout go;
//  3. a scale-up whose nodes all came is done; one that waited longer than
//     --max-node-provision-time times out (ScaleUpTimedOut), backs the
//     group off, and tries to lower the ASG's desired capacity again, which
//     the AWS provider refuses while the instances exist
//     (FailedToRevertScaleUp);
//  4. instances the ASG failed to launch are reported once (ScaleUpFailed)
//     while the group is scaling up, and back the group off;
//  5. instances unregistered for longer than --max-node-provision-time are
//     terminated (DeleteUnregistered), down to the group's min size.
//
// The failed launches are dropped later, once the cluster is found healthy
// (dropFailedLaunches), as cluster-autoscaler deletes nodes with create
// errors only then.
func (l *loop) updateInstances() {
	s, as := l.s, &l.s.Autoscaler
	for i := range as.Launching {
		if as.Launching[i].Seen.IsZero() {
			as.Launching[i].Seen = s.Now
		}
	}
	for _, k := range cluster.SortedKeys(as.Backoff) {
		if as.Backoff[k].LastFailure.Add(l.opts.BackoffResetTimeout).Before(s.Now) {
			delete(as.Backoff, k)
		}
	}
	for _, g := range l.groups {
		l.checkScaleUpRequest(g)
	}
	for _, g := range l.groups {
		l.reportFailedLaunches(g)
	}
	for _, g := range l.groups {
		l.removeLongUnregistered(g)
	}
}

// upcoming counts the group's instances still expected to register.
func (l *loop) upcoming(ng string) int {
	n := 0
	for _, inst := range l.s.Autoscaler.Launching {
		if inst.NodeGroup == ng && !l.longUnregistered(inst) {
			n++
		}
	}
	return n
}

func (l *loop) longUnregistered(inst cluster.ASGInstance) bool {
	return !inst.Seen.IsZero() && inst.Seen.Add(l.opts.MaxNodeProvisionTime).Before(l.s.Now)
}

func (l *loop) checkScaleUpRequest(g nodegroups.Group) {
	s, as := l.s, &l.s.Autoscaler
	req, ok := as.ScaleUpRequests[g.Name]
	if !ok {
		return
	}
	if l.upcoming(g.NodeGroup) == 0 {
		delete(as.ScaleUpRequests, g.Name)
		return
	}
	if !req.Time.Add(l.opts.MaxNodeProvisionTime).Before(s.Now) {
		return
	}
	waited := s.Now.Sub(req.Time)
	s.Record(source, regardingStatus(s), corev1.EventTypeWarning, "ScaleUpTimedOut",
		fmt.Sprintf("Nodes added to group %s failed to register within %v", g.Name, waited))
	backoff(s, l.opts, g.Name, ErrorClassOther, ErrorCodeTimeout,
		fmt.Sprintf("Scale-up timed out for node group %v after %v", g.Name, waited))
	if req.Increase > 0 {
		ng := l.ngOf(g)
		instances := len(g.Nodes(s)) + launchingOf(s, g.NodeGroup)
		if ng.DesiredSize-req.Increase < instances {
			s.Record(source, regardingStatus(s), corev1.EventTypeWarning, "FailedToRevertScaleUp",
				fmt.Sprintf("Failed to decrease target size for group %s after scale-up timeout: attempt to delete existing nodes targetSize:%d delta:%d existingNodes: %d",
					g.Name, ng.DesiredSize, -req.Increase, instances))
		} else {
			ng.DesiredSize -= req.Increase
		}
	}
	delete(as.ScaleUpRequests, g.Name)
}

func (l *loop) reportFailedLaunches(g nodegroups.Group) {
	s, as := l.s, &l.s.Autoscaler
	n := 0
	for i := range as.Launching {
		inst := &as.Launching[i]
		if inst.NodeGroup == g.NodeGroup && inst.Failed && !inst.Reported {
			inst.Reported = true
			n++
		}
	}
	if _, scalingUp := as.ScaleUpRequests[g.Name]; n == 0 || !scalingUp || l.upcoming(g.NodeGroup) == 0 {
		return
	}
	s.Record(source, regardingStatus(s), corev1.EventTypeWarning, "ScaleUpFailed",
		fmt.Sprintf("Failed adding %d nodes to group %s due to %s.%s; source errors: %s",
			n, g.Name, ErrorClassOutOfResources, ErrorCodePlaceholder, ErrorMessagePlaceholder))
	registerScaleUp(s, g.Name, -n)
	backoff(s, l.opts, g.Name, ErrorClassOutOfResources, ErrorCodePlaceholder, ErrorMessagePlaceholder)
}

func (l *loop) removeLongUnregistered(g nodegroups.Group) {
	s, as := l.s, &l.s.Autoscaler
	ng := l.ngOf(g)
	room := ng.DesiredSize - g.MinSize
	var keep []cluster.ASGInstance
	for _, inst := range as.Launching {
		if inst.NodeGroup != g.NodeGroup || inst.Failed || !l.longUnregistered(inst) || room <= 0 {
			keep = append(keep, inst)
			continue
		}
		room--
		ng.DesiredSize--
		s.Record(source, regardingStatus(s), corev1.EventTypeNormal, "DeleteUnregistered",
			"Removed unregistered node "+fakeNodeName(inst))
	}
	as.Launching = keep
}

// dropFailedLaunches deletes the instances the ASGs could not launch, as
// cluster-autoscaler deletes nodes with create errors: the AWS provider
// sets the desired capacity back to the instances that exist.
func (l *loop) dropFailedLaunches() {
	as := &l.s.Autoscaler
	var keep []cluster.ASGInstance
	for _, inst := range as.Launching {
		if !inst.Failed {
			keep = append(keep, inst)
			continue
		}
		if ng := findGroup(l.s, inst.NodeGroup); ng != nil && ng.DesiredSize > 0 {
			ng.DesiredSize--
		}
	}
	as.Launching = keep
}

// launchingOf counts the group's instances without a node.
func launchingOf(s *cluster.State, ng string) int {
	n := 0
	for _, inst := range s.Autoscaler.Launching {
		if inst.NodeGroup == ng {
			n++
		}
	}
	return n
}

// oldEnough drops the pods younger than --new-pod-scale-up-delay (or their
// own cluster-autoscaler.kubernetes.io/pod-scale-up-delay, when that is
// longer), as cluster-autoscaler does: such pods are not considered yet.
func oldEnough(s *cluster.State, pods []*corev1.Pod, delay time.Duration) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		d := delay
		if v, ok := p.Annotations[AnnotationPodScaleUpDelay]; ok {
			if own, err := time.ParseDuration(v); err == nil && own >= delay {
				d = own
			}
		}
		if s.Now.Sub(p.CreationTimestamp.Time) > d {
			out = append(out, p)
		}
	}
	return out
}

// AnnotationPodScaleUpDelay is the per-pod scale-up delay annotation.
const AnnotationPodScaleUpDelay = "cluster-autoscaler.kubernetes.io/pod-scale-up-delay"
