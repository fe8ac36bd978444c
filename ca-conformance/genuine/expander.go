//go:build genuine

package genuine

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	v1lister "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/leastnodes"
	"k8s.io/autoscaler/cluster-autoscaler/expander/mostpods"
	"k8s.io/autoscaler/cluster-autoscaler/expander/priority"
	"k8s.io/autoscaler/cluster-autoscaler/expander/random"
	"k8s.io/autoscaler/cluster-autoscaler/expander/waste"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/berth-sim/berth/ca-conformance/berthrun"
)

// strategy is expander/factory's chain (each filter narrows the options,
// one left ends it, a random pick settles the rest) built from the same
// filters, recording what it was offered and whether chance decided.
type strategy struct {
	filters []expander.Filter
	random  []bool // filters[i] is the random expander
	seen    []optionSeen
	tie     bool
}

type optionSeen struct {
	group string
	nodes int
	pods  []string
}

func newStrategy(names []string, priorities map[int][]string, namespace string, rec record.EventRecorder) (*strategy, error) {
	s := &strategy{}
	for _, n := range names {
		s.random = append(s.random, n == expander.RandomExpanderName)
		switch n {
		case expander.RandomExpanderName:
			s.filters = append(s.filters, random.NewFilter())
		case expander.MostPodsExpanderName:
			s.filters = append(s.filters, mostpods.NewFilter())
		case expander.LeastWasteExpanderName:
			s.filters = append(s.filters, waste.NewFilter())
		case expander.LeastNodesExpanderName:
			s.filters = append(s.filters, leastnodes.NewFilter())
		case expander.PriorityBasedExpanderName:
			s.filters = append(s.filters, priority.NewFilter(priorityLister(priorities, namespace), rec))
		default:
			return nil, fmt.Errorf("expander %q is not wired in the genuine runner", n)
		}
	}
	return s, nil
}

// priorityLister serves the priority expander's ConfigMap from a static
// store (the shipped expander watches it through an informer).
func priorityLister(p map[int][]string, namespace string) v1lister.ConfigMapNamespaceLister {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if len(p) > 0 {
		_ = idx.Add(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: priority.PriorityConfigMapName, Namespace: namespace},
			Data:       map[string]string{"priorities": berthrun.Priorities(p)},
		})
	}
	return v1lister.NewConfigMapLister(idx).ConfigMaps(namespace)
}

func (s *strategy) BestOption(options []expander.Option, nodeInfo map[string]*framework.NodeInfo) *expander.Option {
	s.seen = s.seen[:0]
	for _, o := range options {
		os := optionSeen{group: o.NodeGroup.Id(), nodes: o.NodeCount}
		for _, p := range o.Pods {
			os.pods = append(os.pods, p.Name)
		}
		s.seen = append(s.seen, os)
	}
	left := options
	for i, f := range s.filters {
		if s.random[i] && len(left) > 1 {
			s.tie = true
		}
		left = f.BestOptions(left, nodeInfo)
		if len(left) == 1 {
			return &left[0]
		}
	}
	if len(left) == 0 {
		return nil
	}
	s.tie = true
	return &left[0]
}

// recorder keeps every event with the pod it is about.
type recorder struct{ events []event }

type event struct{ pod, reason, message string }

var _ record.EventRecorder = (*recorder)(nil)

func (r *recorder) Event(obj runtime.Object, _, reason, message string) {
	name := ""
	if m, ok := obj.(metav1.Object); ok {
		name = m.GetName()
	}
	r.events = append(r.events, event{name, reason, message})
}

func (r *recorder) Eventf(obj runtime.Object, t, reason, format string, args ...interface{}) {
	r.Event(obj, t, reason, fmt.Sprintf(format, args...))
}

func (r *recorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, t, reason, format string, args ...interface{}) {
	r.Eventf(obj, t, reason, format, args...)
}
