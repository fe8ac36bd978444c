package app

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/deployment"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/controllers/replicaset"
	"github.com/berth-sim/berth/internal/controllers/tainteviction"
	"github.com/berth-sim/berth/internal/scheduler"
	"github.com/berth-sim/berth/internal/sim"
)

func init() {
	// Pods get addresses from their node's subnet, as the VPC CNI hands them out.
	kubelet.AllocatePodIP = func(s *cluster.State, node *corev1.Node) (string, error) {
		subnet, err := aws.SubnetForNode(s, node)
		if err != nil {
			return "", err
		}
		return aws.AllocateIP(s, subnet)
	}
}

// Controllers returns the reconcile loops in the order the sim runs them:
// workload controllers create pods, the scheduler binds them, the kubelet
// starts them, and taint eviction removes what may not stay.
func Controllers(s *cluster.State) []sim.Controller {
	return []sim.Controller{
		deployment.New(),
		replicaset.New(),
		scheduler.New(),
		kubelet.New(),
		tainteviction.New(),
	}
}
