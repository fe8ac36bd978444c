package endpointslice

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/cluster"
)

// A pass recomputes only the Services whose inputs changed since the
// controller's last pass (docs/simulation-speed.md#endpointslice-resumption):
// at 10,000 pods every Service's selector walks every pod of its namespace,
// and a run of evictions changes a few pods per step. A Service's slices
// and Endpoints depend on the Service, the pods of its namespace its
// selector matches, their nodes, its namespace, and the slices and
// Endpoints themselves. Every write to an object gives it a new
// resource version (deletions remove it), so comparing each object's
// resource version with the one the last pass saw finds what changed:
//   - a changed or new Service is recomputed;
//   - a changed or new pod makes the Services whose selector matches it now
//     or matched it at their last sync recomputed, a removed pod those that
//     matched it;
//   - any change to a node, a namespace, a slice or an Endpoints not
//     written by the last pass itself recomputes every Service;
//   - a Service whose last sync wrote something is recomputed once more, so
//     that only a sync that changed nothing counts as settled.
// A recomputed Service whose selector is as at its last sync looks only at
// the pods it matched then and the pods written since (no other pod of the
// namespace can match it); a new or changed one at every pod of its
// namespace. The first pass of a process recomputes everything. The check is tested
// against recomputing everything (TestResumeMatchesFull).

// seen is what the last pass saw: each object's resource version by key,
// and which pods each Service's selector matched.
type seen struct {
	pods, services, nodes, namespaces, slices, endpoints map[string]string
	// selected is, by Service key, the keys of the pods its selector
	// matched when it was last recomputed.
	selected map[string]map[string]bool
	// order are the same keys in key order (as the pods are of one
	// namespace, in name order).
	order map[string][]string
	// unsettled are the Services whose last sync wrote something.
	unsettled map[string]bool
	// touched are the pods written or created since the last pass with
	// their keys (taken once, not once per Service); in key order once
	// sorted, so the candidates of every Service come out of it in order.
	touched []keyedPod
	// sorted is whether touched is in key order yet (candidates sorts it
	// once, the first time a pass needs it).
	sorted bool
}

// diff updates seen to s's objects and returns the Services to recompute,
// true for those that must look at every pod of their namespace; all is
// true when every Service must be recomputed that way.
func (w *seen) diff(s *cluster.State) (dirty map[string]bool, all bool) {
	all = refresh(w.nodes, s.Nodes)
	all = refresh(w.namespaces, s.Namespaces) || all
	all = refresh(w.slices, s.EndpointSlices) || all
	all = refresh(w.endpoints, s.Endpoints) || all
	dirty = map[string]bool{}
	for k := range w.unsettled {
		dirty[k] = false
	}
	for k, svc := range s.Services {
		if rv, ok := w.services[k]; !ok || rv != svc.ResourceVersion {
			w.services[k] = svc.ResourceVersion
			dirty[k] = true
		}
	}
	for k := range w.services {
		if _, ok := s.Services[k]; !ok {
			delete(w.services, k)
			delete(w.selected, k)
			delete(w.order, k)
		}
	}
	if !anySelects(s.Services) {
		// No Service selects pods, so no Service reads the written pods
		// (docs/simulation-speed.md#taint-eviction-podgc-endpointslice-session-23).
		// The walk over every pod is skipped and pods keeps the versions of
		// an earlier pass: the next walk then finds every pod written since
		// that pass, more than since the last one, which only costs a
		// Service a recomputation that changes nothing. A Service that
		// selects pods at that walk is new or was written since (it did not
		// select any at this pass), so it is recomputed from its namespace.
		w.touched, w.sorted = w.touched[:0], true
		if all {
			return nil, true
		}
		return dirty, false
	}
	if all {
		refresh(w.pods, s.Pods)
		return nil, true
	}
	// Pods that changed: the Services of their namespace that match them
	// now or did.
	w.touched = w.touched[:0]
	for k, p := range s.Pods {
		if rv, ok := w.pods[k]; !ok || rv != p.ResourceVersion {
			w.pods[k] = p.ResourceVersion
			w.touched = append(w.touched, keyedPod{k, p})
		}
	}
	w.sorted = false
	touched := w.touched
	var gone []string
	if len(w.pods) != len(s.Pods) {
		for k := range w.pods {
			if _, ok := s.Pods[k]; !ok {
				gone = append(gone, k)
				delete(w.pods, k)
			}
		}
	}
	if len(touched) == 0 && len(gone) == 0 {
		return dirty, false
	}
	for k, svc := range s.Services {
		if _, ok := dirty[k]; ok || len(svc.Spec.Selector) == 0 {
			continue
		}
		was := w.selected[k]
		for _, name := range gone {
			if was[name] {
				dirty[k] = false
				break
			}
		}
		if _, ok := dirty[k]; ok {
			continue
		}
		selector := labels.SelectorFromSet(svc.Spec.Selector)
		for _, t := range touched {
			if t.pod.Namespace == svc.Namespace && (was[t.key] || selector.Matches(labels.Set(t.pod.Labels))) {
				dirty[k] = false
				break
			}
		}
	}
	return dirty, false
}

// anySelects reports whether some Service has a selector.
func anySelects(services map[string]*corev1.Service) bool {
	for _, svc := range services {
		if len(svc.Spec.Selector) > 0 {
			return true
		}
	}
	return false
}

// keyedPod is a pod with its key.
type keyedPod struct {
	key string
	pod *corev1.Pod
}

// candidates are, in key order, the pods a Service recomputed without a
// namespace scan may match: those it matched at its last sync that still
// exist, and those written since (diff). The matched ones are kept in key
// order (synced) and the written ones are sorted by key once per pass, so
// the namespace's written pods are one run found by binary search, and the
// two runs are merged (a written pod the Service matched appears once).
func (w *seen) candidates(s *cluster.State, svc *corev1.Service) []*corev1.Pod {
	if !w.sorted {
		slices.SortFunc(w.touched, func(a, b keyedPod) int { return strings.Compare(a.key, b.key) })
		w.sorted = true
	}
	// Keys are namespace + "/" + name, and '0' follows '/'.
	lo, _ := slices.BinarySearchFunc(w.touched, svc.Namespace+"/", func(t keyedPod, k string) int { return strings.Compare(t.key, k) })
	hi, _ := slices.BinarySearchFunc(w.touched, svc.Namespace+"0", func(t keyedPod, k string) int { return strings.Compare(t.key, k) })
	fresh := w.touched[lo:hi]
	kept := w.order[cluster.Key(svc.Namespace, svc.Name)]
	out := make([]*corev1.Pod, 0, len(kept)+len(fresh))
	for len(kept) > 0 || len(fresh) > 0 {
		switch {
		case len(fresh) == 0 || (len(kept) > 0 && kept[0] < fresh[0].key):
			if p, ok := s.Pods[kept[0]]; ok {
				out = append(out, p)
			}
			kept = kept[1:]
		case len(kept) > 0 && kept[0] == fresh[0].key:
			out = append(out, fresh[0].pod)
			kept, fresh = kept[1:], fresh[1:]
		default:
			out = append(out, fresh[0].pod)
			fresh = fresh[1:]
		}
	}
	return out
}

// synced notes a recomputed Service: the pods its selector matches, and
// whether its sync wrote something.
func (w *seen) synced(svc *corev1.Service, pods []*corev1.Pod, wrote bool) {
	k := cluster.Key(svc.Namespace, svc.Name)
	if wrote {
		w.unsettled[k] = true
	} else {
		delete(w.unsettled, k)
	}
	if len(svc.Spec.Selector) == 0 {
		delete(w.selected, k)
		delete(w.order, k)
		return
	}
	selector := labels.SelectorFromSet(svc.Spec.Selector)
	matched := map[string]bool{}
	var order []string
	for _, p := range pods { // in name order (podsOfSelectingServices, candidates), so in key order
		if selector.Matches(labels.Set(p.Labels)) {
			key := cluster.Key(p.Namespace, p.Name)
			matched[key] = true
			order = append(order, key)
		}
	}
	w.selected[k] = matched
	w.order[k] = order
}

// written records the slices and Endpoints as the pass leaves them, so
// that the next pass sees only others' writes.
func (w *seen) written(s *cluster.State) {
	refresh(w.slices, s.EndpointSlices)
	refresh(w.endpoints, s.Endpoints)
}

func newSeen() *seen {
	return &seen{pods: map[string]string{}, services: map[string]string{}, nodes: map[string]string{},
		namespaces: map[string]string{}, slices: map[string]string{}, endpoints: map[string]string{},
		selected: map[string]map[string]bool{}, order: map[string][]string{}, unsettled: map[string]bool{}}
}

// versioned is any stored object (its resource version).
type versioned interface{ GetResourceVersion() string }

// refresh brings rvs to the objects' resource versions and reports whether
// any object was added, removed or written since.
func refresh[T versioned](rvs map[string]string, objs map[string]T) bool {
	changed := false
	for k, o := range objs {
		if rv, ok := rvs[k]; !ok || rv != o.GetResourceVersion() {
			rv = o.GetResourceVersion()
			rvs[k] = rv
			changed = true
		}
	}
	if len(rvs) != len(objs) {
		for k := range rvs {
			if _, ok := objs[k]; !ok {
				delete(rvs, k)
				changed = true
			}
		}
	}
	return changed
}

// sortByName orders pods of one namespace by name. Names are unique within
// a namespace, so the order is total and equals what sort.Slice gave
// (TestSortByNameMatchesSortSlice); slices.SortFunc with strings.Compare
// avoids sort.Slice's reflection-based swapper and closure calls, which
// showed up in every pass at 10,000 pods.
func sortByName(pods []*corev1.Pod) {
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
}
