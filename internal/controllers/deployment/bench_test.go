package deployment

import (
	"fmt"
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/controllers/replicaset"
	"github.com/berth-sim/berth/internal/sim"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// roundRobin binds pending pods to n00..n49 in turn: a stand-in scheduler
// cheap enough not to dominate the benchmark.
type roundRobin struct{ next int }

func (b *roundRobin) Name() string { return "round-robin" }

func (b *roundRobin) Sync(s *cluster.State) (bool, error) {
	changed := false
	for _, k := range cluster.SortedKeys(s.Pods) {
		if p := s.Pods[k]; p.Spec.NodeName == "" {
			p.Spec.NodeName = fmt.Sprintf("n%02d", b.next%50)
			b.next++
			changed = true
		}
	}
	return changed, nil
}

// BenchmarkRollout5000 creates a 5000-replica Deployment on 50 nodes and
// runs the deployment, ReplicaSet and kubelet controllers until every pod is
// Running and Ready.
func BenchmarkRollout5000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := controllertest.NewState("ui")
		admission.Create(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui"}})
		for n := 0; n < 50; n++ {
			controllertest.AddNode(s, fmt.Sprintf("n%02d", n), "64", "256Gi", nil)
		}
		d := uiDeployment()
		replicas := int32(5000)
		d.Spec.Replicas = &replicas
		admission.Create(s, d)
		b.StartTimer()
		ctrls := []sim.Controller{New(), replicaset.New(), &roundRobin{}, kubelet.New()}
		if err := sim.Settle(s, ctrls, time.Hour); err != nil {
			b.Fatal(err)
		}
		if got := s.Deployments["ui/ui"].Status.AvailableReplicas; got != replicas {
			b.Fatalf("available %d, want %d", got, replicas)
		}
	}
}
