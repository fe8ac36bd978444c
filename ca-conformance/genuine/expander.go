//go:build genuine

package genuine

import (
	"fmt"
	"sort"

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
// filters, recording what it was offered and where chance decided. Where
// the shipped chain picks at random — the random expander with more than
// one option, or the fallback after the last filter — this one takes the
// option of the preferred group when it is among those left, else the
// first by group name: a pick chance could make, steered to the answer
// being checked (README, "Ties").
type strategy struct {
	filters []expander.Filter
	random  []bool // filters[i] is the random expander
	prefer  string
	seen    []optionSeen
	// left are the options chance chose among (sorted by group); empty
	// when the filters alone decided.
	left []optionSeen
	// chosen is the group of the option returned.
	chosen string
}

type optionSeen struct {
	group string
	nodes int
	pods  []string
}

func seenOf(o expander.Option) optionSeen {
	os := optionSeen{group: o.NodeGroup.Id(), nodes: o.NodeCount}
	for _, p := range o.Pods {
		os.pods = append(os.pods, p.Name)
	}
	return os
}

func newStrategy(names []string, priorities map[int][]string, namespace string, rec record.EventRecorder, prefer string) (*strategy, error) {
	s := &strategy{prefer: prefer}
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
	s.seen, s.left, s.chosen = s.seen[:0], nil, ""
	for _, o := range options {
		s.seen = append(s.seen, seenOf(o))
	}
	left := options
	for i, f := range s.filters {
		if s.random[i] {
			// The random filter keeps one option at random: chance.
			return s.choose(s.chance(left))
		}
		left = f.BestOptions(left, nodeInfo)
		if len(left) == 1 {
			return s.choose(&left[0])
		}
	}
	// The chain's fallback is the random strategy.
	return s.choose(s.chance(left))
}

func (s *strategy) choose(o *expander.Option) *expander.Option {
	if o != nil {
		s.chosen = o.NodeGroup.Id()
	}
	return o
}

// chance is a random pick among left, steered to the preferred group.
func (s *strategy) chance(left []expander.Option) *expander.Option {
	if len(left) == 0 {
		return nil
	}
	if len(left) == 1 {
		return &left[0]
	}
	sorted := append([]expander.Option(nil), left...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].NodeGroup.Id() < sorted[j].NodeGroup.Id() })
	for _, o := range sorted {
		s.left = append(s.left, seenOf(o))
	}
	for i := range sorted {
		if sorted[i].NodeGroup.Id() == s.prefer {
			return &sorted[i]
		}
	}
	return &sorted[0]
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
