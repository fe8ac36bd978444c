package app

import (
	corev1 "k8s.io/api/core/v1"

	autoscaler "github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/daemonset"
	"github.com/berth-sim/berth/internal/controllers/deployment"
	"github.com/berth-sim/berth/internal/controllers/disruption"
	"github.com/berth-sim/berth/internal/controllers/endpointslice"
	"github.com/berth-sim/berth/internal/controllers/garbagecollector"
	"github.com/berth-sim/berth/internal/controllers/job"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/controllers/nodeipam"
	"github.com/berth-sim/berth/internal/controllers/nodelifecycle"
	"github.com/berth-sim/berth/internal/controllers/podgc"
	"github.com/berth-sim/berth/internal/controllers/replicaset"
	"github.com/berth-sim/berth/internal/controllers/statefulset"
	"github.com/berth-sim/berth/internal/controllers/tainteviction"
	"github.com/berth-sim/berth/internal/controllers/volume"
	fargatectl "github.com/berth-sim/berth/internal/fargate/controller"
	karpdisruption "github.com/berth-sim/berth/internal/karpenter/disruption"
	"github.com/berth-sim/berth/internal/karpenter/divergence"
	"github.com/berth-sim/berth/internal/karpenter/interruption"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioner"
	karpstatus "github.com/berth-sim/berth/internal/karpenter/status"
	"github.com/berth-sim/berth/internal/podnet"
	"github.com/berth-sim/berth/internal/scheduler"
	"github.com/berth-sim/berth/internal/sim"
)

// podIPs hands out pod addresses: from the node's subnet on EC2 nodes, as
// the VPC CNI does, from the node's podCIDR elsewhere (docs/pod-networking.md).
func podIPs(s *cluster.State) func(node *corev1.Node) (string, error) {
	return podnet.NewAllocator(s).Allocate
}

// controllers is Controllers with this run's options applied.
func (a *App) controllers(s *cluster.State) []sim.Controller {
	ctrls := Controllers(s)
	if a.opts.SchedulerObserver != nil {
		for _, c := range ctrls {
			if sc, ok := c.(*scheduler.Scheduler); ok && sc.Name() == scheduler.DefaultSchedulerName {
				sc.Observe(a.opts.SchedulerObserver)
			}
		}
	}
	return ctrls
}

// Controllers returns the reconcile loops in the order the sim runs them:
// the garbage collector removes what lost its owners, workload controllers create pods (and claims), the volume binder binds what
// it can before the scheduler binds pods, the kubelet starts them, taint
// eviction removes what may not stay, the disruption controller keeps
// budgets current, the EndpointSlice controller lists each Service's pods
// (docs/services.md); Karpenter's provisioner creates NodeClaims for pods
// nothing can hold, its lifecycle launches, registers and terminates their
// nodes (after the interruption controller acted on spot notices), and its
// disruption consolidates, replaces drifted nodes and removes empty and
// expired ones; berth last reports where Karpenter's plan and
// kube-scheduler's bindings diverged. Fargate's controller brings up one
// node per pod handed to fargate-scheduler, and the fargate-scheduler
// profile binds the pod there (docs/fargate.md). cluster-autoscaler, when
// the cluster runs it, resizes node groups after the scheduler has marked
// pods unschedulable (docs/cluster-autoscaler.md). The provisioner, the
// interruption controller, the lifecycle and disruption share one
// instance-type catalog, so all see the same unavailable offerings and
// prices.
func Controllers(s *cluster.State) []sim.Controller {
	catalog := pools.NewCatalog()
	return []sim.Controller{
		garbagecollector.New(),
		deployment.New(),
		replicaset.New(),
		daemonset.New(),
		statefulset.New(),
		job.New(),
		volume.New(),
		scheduler.New(),
		fargatectl.New(),
		fargatectl.Scheduler(func() *cluster.State { return s }),
		provisioner.New(catalog),
		autoscaler.New(),
		nodeipam.New(),
		kubelet.NewWithIPAllocator(podIPs),
		nodelifecycle.New(),
		tainteviction.New(),
		podgc.New(),
		disruption.New(),
		endpointslice.New(),
		interruption.New(catalog),
		lifecycle.New(catalog),
		karpdisruption.New(catalog),
		karpstatus.New(),
		divergence.New(),
	}
}
