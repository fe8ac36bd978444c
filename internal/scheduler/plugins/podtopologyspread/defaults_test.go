package podtopologyspread

import (
	"fmt"
	"math/rand"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// epochHandle is a test handle whose objects change only with a new epoch.
type epochHandle struct {
	*plugintest.Handle
	epoch uint64
}

func (h *epochHandle) ObjectsEpoch() uint64 { return h.epoch }

// TestDefaultSelectorCacheMatchesHelper asks for random pods' default
// selectors through the cache and through helper.DefaultSelector, with the
// Services and owners redrawn at every epoch, and wants the same selector.
func TestDefaultSelectorCacheMatchesHelper(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	namespaces := []string{"default", "team-a"}
	apps := []string{"web", "db", "cache"}
	values := []string{"a", "b"}
	randLabels := func() map[string]string {
		m := map[string]string{}
		for _, k := range []string{"app", "tier", "pod-template-hash"} {
			if r.Intn(3) != 0 {
				if k == "app" {
					m[k] = apps[r.Intn(len(apps))]
				} else {
					m[k] = values[r.Intn(len(values))]
				}
			}
		}
		return m
	}
	sel := func() *metav1.LabelSelector {
		if r.Intn(5) == 0 {
			return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: values[:1+r.Intn(2)]}}}
		}
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": apps[r.Intn(len(apps))]}}
	}
	h := &epochHandle{Handle: plugintest.NewHandle(nil, nil)}
	pl := New(h)
	owners := []struct{ apiVersion, kind string }{{"apps/v1", "ReplicaSet"}, {"apps/v1", "StatefulSet"}, {"v1", "ReplicationController"}, {"apps/v1", "Deployment"}, {"bad/group/v1", "ReplicaSet"}}
	asked := 0
	for epoch := uint64(1); epoch <= 30; epoch++ {
		h.epoch = epoch
		h.ServiceObjs, h.ReplicaSetObjs, h.StatefulSetObjs, h.ReplicationControllers = nil, nil, nil, nil
		for _, ns := range namespaces {
			for i := 0; i < 3; i++ {
				name := fmt.Sprintf("o%d", i)
				if r.Intn(3) != 0 {
					h.ServiceObjs = append(h.ServiceObjs, &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ServiceSpec{Selector: randLabels()}})
				}
				if r.Intn(2) == 0 {
					h.ReplicaSetObjs = append(h.ReplicaSetObjs, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.ReplicaSetSpec{Selector: sel()}})
				}
				if r.Intn(2) == 0 {
					h.StatefulSetObjs = append(h.StatefulSetObjs, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.StatefulSetSpec{Selector: sel()}})
				}
				if r.Intn(2) == 0 {
					h.ReplicationControllers = append(h.ReplicationControllers, &v1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ReplicationControllerSpec{Selector: randLabels()}})
				}
			}
		}
		for i := 0; i < 200; i++ {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[r.Intn(len(namespaces))], Name: "p", Labels: randLabels()}}
			if r.Intn(4) != 0 {
				o := owners[r.Intn(len(owners))]
				pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: o.apiVersion, Kind: o.kind, Name: fmt.Sprintf("o%d", r.Intn(4)), Controller: new(r.Intn(5) != 0)}}
			}
			got, want := pl.defaultSelector(pod).String(), helper.DefaultSelector(pod, h).String()
			if got != want {
				t.Fatalf("epoch %d, pod %+v: cached %q, want %q", epoch, pod.ObjectMeta, got, want)
			}
			asked++
		}
	}
	if asked == 0 || len(pl.defaults.byKey) == 0 {
		t.Fatal("cache not used")
	}
}
