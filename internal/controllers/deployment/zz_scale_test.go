package deployment

import (
	"fmt"
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/sim"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/replicaset"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestScaleTmp(t *testing.T) {
	s := controllertest.NewState("ui")
	admission.Create(s, saUI())
	_ = 0
	for i := 0; i < 50; i++ {
		controllertest.AddNode(s, fmt.Sprintf("n%02d", i), "64", "256Gi", nil)
	}
	d := uiDeployment()
	n := int32(5000)
	d.Spec.Replicas = &n
	admission.Create(s, d)
	start := time.Now()
	if err := sim.Settle(s, []sim.Controller{New(), replicaset.New(), &rrBinder{}, kubelet.New()}, time.Hour); err != nil {
		t.Fatal(err)
	}
	t.Logf("settled %d pods in %v", len(s.Pods), time.Since(start))
}

func saUI() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui"}}
}

type rrBinder struct{ n int }

func (b *rrBinder) Name() string { return "rr" }
func (b *rrBinder) Sync(s *cluster.State) (bool, error) {
	ch := false
	for _, k := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[k]
		if p.Spec.NodeName == "" {
			p.Spec.NodeName = fmt.Sprintf("n%02d", b.n%50)
			b.n++
			ch = true
		}
	}
	return ch, nil
}
