// Package controller runs cluster-autoscaler in virtual time: when the
// cluster holds a running cluster-autoscaler Deployment it reads the
// container's flags, and every --scan-interval it scales node groups up
// for unschedulable pods and down for unneeded nodes; the groups' Auto
// Scaling groups launch and terminate the instances
// (docs/cluster-autoscaler.md).
package controller

import (
	"path"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/autoscaler/config"
	"github.com/berth-sim/berth/internal/capacity/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
)

// Name is the controller's name and the events' reporting component.
const Name = "cluster-autoscaler"

// BootDelay is from an ASG's desired-capacity change to the instance's node
// registering Ready: within the 45-90 s EKS nodes take
// (docs/cluster-autoscaler.md#timing).
const BootDelay = 45 * time.Second

var source = cluster.EventSource{Component: Name, Correlator: cluster.CorrelatorAutoscaler}

// Controller implements sim.Controller.
type Controller struct{}

// New returns the controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Deployment returns the cluster's cluster-autoscaler Deployment and its
// container, if any: the first Deployment (by namespace and name) with a
// container whose image or command is cluster-autoscaler.
func Deployment(s *cluster.State) (*appsv1.Deployment, *corev1.Container) {
	for _, k := range cluster.SortedKeys(s.Deployments) {
		d := s.Deployments[k]
		if c := Container(d); c != nil {
			return d, c
		}
	}
	return nil, nil
}

// Container is the Deployment's cluster-autoscaler container, or nil.
func Container(d *appsv1.Deployment) *corev1.Container {
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		image := c.Image
		if at := strings.IndexAny(image, "@"); at >= 0 {
			image = image[:at]
		}
		if colon := strings.LastIndex(image, ":"); colon > strings.LastIndex(image, "/") {
			image = image[:colon]
		}
		if path.Base(image) == "cluster-autoscaler" {
			return c
		}
		if len(c.Command) > 0 && path.Base(c.Command[0]) == "cluster-autoscaler" {
			return c
		}
	}
	return nil
}

// Args is the container's command line (command then args).
func Args(c *corev1.Container) []string {
	return append(append([]string(nil), c.Command...), c.Args...)
}

// Options parses the flags of the cluster's cluster-autoscaler, with ok
// false when there is none.
func Options(s *cluster.State) (config.Options, bool, error) {
	_, c := Deployment(s)
	if c == nil {
		return config.Options{}, false, nil
	}
	o, err := config.Parse(Args(c))
	return o, true, err
}

// running tells whether a pod of the Deployment runs: cluster-autoscaler
// acts only while its own pod is up.
func running(s *cluster.State, d *appsv1.Deployment) bool {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() {
		return false
	}
	for _, p := range s.Pods {
		if p.Namespace == d.Namespace && p.Status.Phase == corev1.PodRunning && sel.Matches(labels.Set(p.Labels)) {
			return true
		}
	}
	return false
}

// Sync runs the ASGs (launches and registrations) on every call and
// cluster-autoscaler's loop when it is due.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	changed := c.syncInstances(s)
	if c.finishDeletions(s) {
		changed = true
	}
	d, container := Deployment(s)
	if d == nil || !running(s, d) {
		return changed, nil
	}
	opts, err := config.Parse(Args(container))
	if err != nil {
		// Valid input never fails here: apply refuses bad flags, so this
		// is a Deployment edited in a way berth cannot read; say so once.
		if !s.HasEvent(Name, corev1.EventTypeWarning, "InvalidFlags", cluster.Regarding("Deployment", "apps/v1", d)) {
			s.Record(source, cluster.Regarding("Deployment", "apps/v1", d), corev1.EventTypeWarning, "InvalidFlags", err.Error())
			return true, nil
		}
		return changed, nil
	}
	as := &s.Autoscaler
	if s.Now.Before(as.NextScan) {
		c.wake(s, as.NextScan)
		return changed, nil
	}
	as.NextScan = s.Now.Add(opts.ScanInterval)
	if err := runOnce(s, d, opts); err != nil {
		return true, err
	}
	c.wake(s, as.NextScan)
	return true, nil
}

// wake asks for the next loop. It keeps `apply` running only while the
// loop has something to finish (instances booting, nodes being removed,
// pending pods it has not judged yet); otherwise the loop runs under
// `advance` only, so that a pod nobody can help does not hold `apply`.
func (c *Controller) wake(s *cluster.State, at time.Time) {
	as := &s.Autoscaler
	settling := len(as.Launching) > 0 || len(as.Deleting) > 0 || unjudged(s)
	s.AddTimer(cluster.Timer{At: at, Owner: Name, Settling: settling})
}

// unjudged tells whether a pending pod has not been looked at yet.
func unjudged(s *cluster.State) bool {
	for _, p := range pendingPods(s) {
		if !s.Autoscaler.Judged[string(p.UID)] {
			return true
		}
	}
	return false
}

// syncInstances launches instances for groups whose desired capacity is
// above their nodes, and registers those that finished booting. Only groups
// cluster-autoscaler has resized carry launches: others were brought up at
// apply (docs/cluster-autoscaler.md#timing).
func (c *Controller) syncInstances(s *cluster.State) bool {
	as := &s.Autoscaler
	changed := false
	var keep []cluster.ASGInstance
	for _, inst := range as.Launching {
		if inst.Failed {
			keep = append(keep, inst)
			continue
		}
		if s.Now.Before(inst.ReadyAt) {
			keep = append(keep, inst)
			s.AddTimer(cluster.Timer{At: inst.ReadyAt, Owner: Name, Settling: true})
			continue
		}
		ng := findGroup(s, inst.NodeGroup)
		if ng == nil {
			changed = true
			continue
		}
		one := *ng
		one.DesiredSize = len(nodegroups.GroupNodes(s, ng.Name)) + 1
		if inst.Zone != "" {
			// The ASG chose the zone at launch (launch in provision.go).
			one.Zones = []string{inst.Zone}
		}
		if _, err := nodegroups.CreateNodes(s, one); err != nil {
			s.Record(source, regardingStatus(s), corev1.EventTypeWarning, "FailedToScaleUpGroup",
				"Scale-up failed for group "+inst.NodeGroup+": "+err.Error())
		}
		changed = true
	}
	as.Launching = keep
	return changed
}

func findGroup(s *cluster.State, name string) *cluster.NodeGroup {
	for i := range s.NodeGroups {
		if s.NodeGroups[i].Name == name {
			return &s.NodeGroups[i]
		}
	}
	return nil
}
