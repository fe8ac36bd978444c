// Package controller runs Fargate's side of a pod's life in virtual time:
// it judges each pod handed to fargate-scheduler once (unsupported pods get
// a FailedScheduling event and stay Pending), sizes it, reports logging,
// brings up the pod's own node after the micro-VM's boot time, and removes
// the node once the pod is gone. Binding the pod to its node is the
// fargate-scheduler profile of berth's scheduler (plugin.go), so the
// Scheduled event and the binding are the scheduler's (docs/fargate.md).
package controller

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/fargate"
)

// Name is the controller's name.
const Name = "fargate"

// Timing in virtual time (docs/fargate.md#events-and-timing).
const (
	// BootDelay is from the pod's arrival to its node registering and the
	// Scheduled event: the 12 s of the EKS workshop's events.
	BootDelay = 12 * time.Second
	// NodeLinger is how long a node stays after its pod is gone.
	NodeLinger = 30 * time.Second
)

var source = cluster.EventSource{Component: fargate.SchedulerName}

// Controller implements sim.Controller.
type Controller struct {
	// idle is the object set of the last pass, when it found no pod to
	// handle and no pod record (idleState says of which state).
	idle      cluster.ObjectSet
	idleState *cluster.State
}

// New returns the Fargate controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync handles new pods, registers nodes that are due and removes the nodes
// of pods that are gone.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	// A pod is handed to fargate-scheduler when it is created (its
	// schedulerName never changes), and a pod that was bound, finished or
	// marked for deletion never waits again. So after a pass that found
	// no such pod and no record, the next ones find none either until an
	// object is created or replaced (cluster.ObjectSet); without records
	// the clock changes nothing. At 100,000 pods on a cluster without
	// Fargate that is one walk per apply instead of one per round
	// (docs/simulation-speed.md#passes-over-a-set-of-objects-that-did-not-change-session-24).
	set := s.ObjectSet()
	if c.idleState == s && c.idle == set && len(s.Fargate.Pods) == 0 {
		return false, nil
	}
	c.idleState = nil
	changed := false
	var pending []*corev1.Pod
	for _, p := range s.Pods {
		if p.Spec.SchedulerName == fargate.SchedulerName && p.Spec.NodeName == "" && !cluster.IsTerminal(p) && p.DeletionTimestamp == nil {
			pending = append(pending, p)
		}
	}
	if len(pending) == 0 && len(s.Fargate.Pods) == 0 {
		c.idle, c.idleState = set, s
		return false, nil
	}
	cluster.SortByCreation(s, pending)
	var used map[string]bool
	for _, p := range pending {
		rec := s.Fargate.Pods[p.UID]
		switch {
		case rec == nil:
			if used == nil {
				used = aws.UsedIPs(s)
			}
			admit(s, p, used)
			changed = true
		case rec.Rejected || rec.NodeCreated || s.Now.Before(rec.ReadyAt):
		default:
			if register(s, p, rec) {
				changed = true
			}
		}
	}
	if cleanUp(s) {
		changed = true
	}
	return changed, nil
}

// admit judges a pod the first time fargate-scheduler sees it.
func admit(s *cluster.State, p *corev1.Pod, used map[string]bool) {
	if s.Fargate.Pods == nil {
		s.Fargate.Pods = map[types.UID]*cluster.FargatePod{}
	}
	rec := &cluster.FargatePod{Pod: cluster.Key(p.Namespace, p.Name)}
	s.Fargate.Pods[p.UID] = rec
	if msg := fargate.Unsupported(s, p); msg != "" {
		reject(s, p, rec, msg)
		return
	}
	profile := fargate.Profile(s, p.Labels[fargate.LabelProfile])
	if profile == nil {
		profile = fargate.Choose(fargate.Profiles(s), p.Namespace, p.Labels)
	}
	if profile == nil {
		// A pod that names fargate-scheduler itself but that no profile
		// selects (berth's wording; docs/fargate.md).
		reject(s, p, rec, fmt.Sprintf("no Fargate profile selects pod %s/%s (namespace and labels)", p.Namespace, p.Name))
		return
	}
	rec.Profile = profile.Name
	subnet, ok := pickSubnet(s, profile)
	if !ok {
		reject(s, p, rec, fmt.Sprintf("Fargate profile %s has no subnet in the cluster VPC", profile.Name))
		return
	}
	ip, err := aws.AllocateIPFrom(s, subnet.CIDR, used)
	if err != nil {
		reject(s, p, rec, fmt.Sprintf("Fargate could not provision capacity: %v", err))
		return
	}
	cpu, mem := fargate.PodRequests(p)
	z, _ := fargate.SizeFor(cpu, mem) // Unsupported ruled out sizes that do not fit
	lg := fargate.LoggingFor(s)
	s.Record(source, cluster.Regarding("Pod", "v1", p), lg.EventType, lg.Reason, lg.Message)
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[fargate.AnnotationCapacityProvisioned] = z.String()
	p.Annotations[fargate.AnnotationLogging] = lg.Annotation
	p.ResourceVersion = s.Bump()
	rec.IP, rec.Zone, rec.Subnet = ip, subnet.Zone, aws.VPCSubnetID(s.Info.Name, subnet)
	rec.VCPU, rec.MemoryGB = z.VCPU(), z.GB()
	rec.ReadyAt = s.Now.Add(BootDelay)
	s.AddTimer(cluster.Timer{At: rec.ReadyAt, Owner: Name, Object: rec.Pod, Settling: true})
}

// reject records fargate-scheduler's verdict; the pod stays Pending and is
// not tried again (docs/fargate.md#what-cannot-run-on-fargate).
func reject(s *cluster.State, p *corev1.Pod, rec *cluster.FargatePod, msg string) {
	rec.Rejected = true
	s.Record(source, cluster.Regarding("Pod", "v1", p), corev1.EventTypeWarning, "FailedScheduling", msg)
	s.UpdatePodStatus(p, func(st *corev1.PodStatus) bool {
		for _, c := range st.Conditions {
			if c.Type == corev1.PodScheduled {
				return false
			}
		}
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: msg, LastTransitionTime: metav1.NewTime(s.Now)})
		return true
	})
}

// pickSubnet draws one of the profile's subnets with the state's random
// source: EKS spreads pods over the profile's subnets, not evenly.
func pickSubnet(s *cluster.State, profile *cluster.FargateProfile) (aws.Subnet, bool) {
	subnets, err := aws.VPCSubnets(s.Info.VPCCIDR, aws.ClusterZones(s.Info))
	if err != nil {
		return aws.Subnet{}, false
	}
	var candidates []aws.Subnet
	for _, id := range profile.Subnets {
		for _, sn := range subnets {
			if sn.Private && aws.VPCSubnetID(s.Info.Name, sn) == id {
				candidates = append(candidates, sn)
			}
		}
	}
	if len(candidates) == 0 {
		return aws.Subnet{}, false
	}
	return candidates[s.Rand.Intn(len(candidates))], true
}

// register adds the pod's node; the fargate-scheduler profile binds the pod
// to it in the same instant.
func register(s *cluster.State, p *corev1.Pod, rec *cluster.FargatePod) bool {
	z, ok := fargate.ParseSize(rec.VCPU + "vCPU " + rec.MemoryGB + "GB")
	if !ok {
		return false
	}
	node := fargate.BuildNode(s, rec, z)
	rec.Node, rec.NodeCreated = node.Name, true
	if _, taken := s.Nodes[node.Name]; taken {
		reject(s, p, rec, fmt.Sprintf("Fargate could not provision capacity: node %s already exists", node.Name))
		return true
	}
	node.ResourceVersion = s.Bump()
	s.NoteCreated(node.UID)
	s.Nodes[node.Name] = node
	s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, node.Name)
	s.NodeAdded(node)
	return true
}

// cleanUp forgets pods that are gone and removes their nodes NodeLinger
// after the pod went (deleted, finished, or replaced by a pod of the same
// name).
func cleanUp(s *cluster.State) bool {
	changed := false
	for _, uid := range cluster.SortedKeys(s.Fargate.Pods) {
		rec := s.Fargate.Pods[uid]
		p, ok := s.Pods[rec.Pod]
		if ok && p.UID == uid && !cluster.IsTerminal(p) {
			continue
		}
		if !rec.NodeCreated || rec.Rejected {
			delete(s.Fargate.Pods, uid)
			changed = true
			continue
		}
		if rec.GoneAt == nil {
			at := s.Now
			rec.GoneAt = &at
			s.AddTimer(cluster.Timer{At: at.Add(NodeLinger), Owner: Name, Object: rec.Node, Settling: true})
			changed = true
			continue
		}
		if !s.Now.Before(rec.GoneAt.Add(NodeLinger)) {
			s.DeleteNode(rec.Node)
			delete(s.Fargate.Pods, uid)
			changed = true
		}
	}
	return changed
}
