// Package endpointslice is the EndpointSlice controller
// (pkg/controller/endpointslice with the k8s.io/endpointslice reconciler):
// every Service with a selector gets slices listing the pods it selects,
// with their addresses, ready/serving/terminating conditions, node, zone
// and ports. It also plays the API server's endpoint reconciler, which
// publishes the control plane's addresses as the endpoints of
// default/kubernetes. See docs/services.md.
package endpointslice

import (
	"hash/fnv"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// Name is the controller's name in kube-controller-manager.
const Name = "endpointslice-controller"

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
// slices this controller owns.
const ManagedBy = "endpointslice-controller.k8s.io"

// MaxEndpointsPerSlice is kube-controller-manager's default
// --max-endpoints-per-slice.
const MaxEndpointsPerSlice = 100

// Controller implements sim.Controller.
type Controller struct {
	// synced is the resource version after the last pass: slices depend on
	// objects only, so a pass over an unchanged state has nothing to do.
	synced int64
	ran    bool
	// seen is what the last pass saw, to recompute only the Services
	// whose inputs changed since (resume.go).
	seen *seen
}

// New returns the EndpointSlice controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync brings every Service's slices, and the kubernetes Service's
// endpoints, in line with the pods and nodes.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	if c.ran && s.ResourceVersion == c.synced {
		return false, nil
	}
	if !c.ran || c.seen == nil {
		c.seen = newSeen()
	}
	dirty, all := c.seen.diff(s)
	all = all || !c.ran
	changed := syncAPIServerEndpoints(s)
	podsByNS := podsOfSelectingServices(s, func(svc string) bool { return all || dirty[svc] })
	podsOf := func(key string, svc *corev1.Service) []*corev1.Pod {
		if all || dirty[key] {
			return podsByNS[svc.Namespace]
		}
		return c.seen.candidates(s, svc)
	}
	slicesBySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, key := range cluster.SortedKeys(s.EndpointSlices) {
		sl := s.EndpointSlices[key]
		if sl.Labels[discoveryv1.LabelManagedBy] != ManagedBy || sl.Labels[discoveryv1.LabelServiceName] == "" {
			continue
		}
		svcKey := cluster.Key(sl.Namespace, sl.Labels[discoveryv1.LabelServiceName])
		slicesBySvc[svcKey] = append(slicesBySvc[svcKey], sl)
	}
	for _, key := range cluster.SortedKeys(s.Services) {
		if _, ok := dirty[key]; !all && !ok {
			continue
		}
		svc := s.Services[key]
		pods := podsOf(key, svc)
		wrote := syncService(s, svc, pods, slicesBySvc[key])
		if len(svc.Spec.Selector) > 0 && svc.Spec.Type != corev1.ServiceTypeExternalName &&
			syncEndpoints(s, svc, pods) {
			wrote = true
		}
		c.seen.synced(svc, pods, wrote)
		changed = changed || wrote
	}
	// The Endpoints controller deletes the Endpoints of a deleted Service
	// (they have no owner reference for the garbage collector to follow).
	for _, key := range cluster.SortedKeys(s.Endpoints) {
		if _, ok := s.Services[key]; !ok && s.Endpoints[key].Labels[labelEndpointsManagedBy] == EndpointsControllerName {
			delete(s.Endpoints, key)
			s.Bump()
			changed = true
		}
	}
	c.seen.written(s)
	c.ran, c.synced = true, s.ResourceVersion
	return changed, nil
}

// podsOfSelectingServices lists, in key order, the pods of the namespaces
// that have a Service with a selector that want accepts (most pods of a
// large cluster need no sorting when few namespaces have Services).
func podsOfSelectingServices(s *cluster.State, want func(svc string) bool) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for key, svc := range s.Services {
		if len(svc.Spec.Selector) > 0 && want(key) {
			out[svc.Namespace] = nil
		}
	}
	if len(out) == 0 {
		return out
	}
	for _, p := range s.Pods {
		if list, ok := out[p.Namespace]; ok {
			out[p.Namespace] = append(list, p)
		}
	}
	for _, list := range out {
		sortByName(list)
	}
	return out
}

// syncService reconciles one Service's slices as the upstream reconciler
// does for its one address family (berth's clusters are IPv4).
func syncService(s *cluster.State, svc *corev1.Service, pods []*corev1.Pod, existing []*discoveryv1.EndpointSlice) bool {
	if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName {
		// Slices of a selector-less Service are the user's to write.
		return deleteSlices(s, existing)
	}
	w := writer{s: s, svc: svc}
	var owned []*discoveryv1.EndpointSlice
	for _, sl := range existing {
		if ownedBy(sl, svc) {
			owned = append(owned, sl)
		} else {
			w.toDelete = append(w.toDelete, sl)
		}
	}
	desired, metas, order := desiredEndpoints(s, svc, pods)
	byPorts := map[string][]*discoveryv1.EndpointSlice{}
	for _, sl := range owned {
		k := portMapKey(sl.Ports)
		byPorts[k] = append(byPorts[k], sl)
	}
	for _, k := range order {
		w.reconcilePortMap(byPorts[k], desired[k], metas[k])
	}
	for _, sl := range owned {
		if _, ok := desired[portMapKey(sl.Ports)]; !ok {
			w.toDelete = append(w.toDelete, sl)
		}
	}
	// A Service that selects nothing keeps one empty placeholder slice.
	if len(existing) == len(w.toDelete) && len(w.toCreate) == 0 {
		placeholder := newSlice(svc, nil)
		if len(w.toDelete) == 1 && samePlaceholder(w.toDelete[0], placeholder) {
			w.toDelete = nil
		} else {
			w.toCreate = append(w.toCreate, placeholder)
		}
	}
	return w.finalize()
}

// desiredEndpoints are the endpoints of the pods the Service selects, by
// port map (pods whose named target ports resolve differently land in
// different slices), each group's endpoints in pod key order.
func desiredEndpoints(s *cluster.State, svc *corev1.Service, pods []*corev1.Pod) (map[string][]discoveryv1.Endpoint, map[string][]discoveryv1.EndpointPort, []string) {
	selector := labels.SelectorFromSet(svc.Spec.Selector)
	desired := map[string][]discoveryv1.Endpoint{}
	metas := map[string][]discoveryv1.EndpointPort{}
	var order []string
	for _, pod := range pods {
		if !selector.Matches(labels.Set(pod.Labels)) || !inEndpoints(pod) {
			continue
		}
		node, ok := s.Nodes[pod.Spec.NodeName]
		if !ok && !svc.Spec.PublishNotReadyAddresses {
			// A pod whose node is gone is left out until the pod GC removes it.
			continue
		}
		ports := endpointPorts(svc, pod)
		k := portMapKey(ports)
		if _, seen := metas[k]; !seen {
			metas[k] = ports
			order = append(order, k)
		}
		ep := podToEndpoint(pod, node, svc)
		if len(ep.Addresses) > 0 {
			desired[k] = append(desired[k], ep)
		} else if desired[k] == nil {
			desired[k] = []discoveryv1.Endpoint{}
		}
	}
	return desired, metas, order
}

// inEndpoints is ShouldPodBeInEndpoints with terminating pods included: not
// Succeeded or Failed, and an address assigned.
func inEndpoints(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	return pod.Status.PodIP != "" || len(pod.Status.PodIPs) > 0
}

// writer collects one Service's slice changes and applies them as the
// reconciler's finalize does.
type writer struct {
	s                            *cluster.State
	svc                          *corev1.Service
	toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice
}

// reconcilePortMap updates the slices of one port map: endpoints no longer
// wanted leave their slice (an emptied slice is deleted), changed ones are
// updated in place, and new ones fill the slices being updated first, then
// the unchanged slice closest to full, then new slices of at most
// MaxEndpointsPerSlice.
func (w *writer) reconcilePortMap(existing []*discoveryv1.EndpointSlice, desired []discoveryv1.Endpoint, ports []discoveryv1.EndpointPort) {
	want := map[string]int{}
	for i := range desired {
		want[endpointKey(&desired[i])] = i
	}
	placed := map[string]bool{}
	var unchanged, updates []*discoveryv1.EndpointSlice
	for _, sl := range existing {
		var kept []discoveryv1.Endpoint
		dirty := false
		for i := range sl.Endpoints {
			k := endpointKey(&sl.Endpoints[i])
			j, ok := want[k]
			if !ok || placed[k] {
				dirty = true
				continue
			}
			placed[k] = true
			if !endpointEqual(&sl.Endpoints[i], &desired[j]) {
				dirty = true
			}
			kept = append(kept, desired[j])
		}
		labels := sliceLabels(w.svc)
		if !apiequality.Semantic.DeepEqual(labels, sl.Labels) {
			dirty = true
		}
		switch {
		case dirty && len(kept) == 0:
			w.toDelete = append(w.toDelete, sl)
		case dirty:
			c := sl.DeepCopy()
			c.Endpoints, c.Labels = kept, labels
			updates = append(updates, c)
		default:
			unchanged = append(unchanged, sl)
		}
	}
	var fresh []discoveryv1.Endpoint
	for i := range desired {
		if !placed[endpointKey(&desired[i])] {
			fresh = append(fresh, desired[i])
		}
	}
	// Slices already being written take new endpoints first, fullest first.
	sort.SliceStable(updates, func(i, j int) bool { return len(updates[i].Endpoints) > len(updates[j].Endpoints) })
	for _, sl := range updates {
		for len(fresh) > 0 && len(sl.Endpoints) < MaxEndpointsPerSlice {
			sl.Endpoints, fresh = append(sl.Endpoints, fresh[0]), fresh[1:]
		}
	}
	if len(fresh) > 0 && len(fresh) < MaxEndpointsPerSlice {
		if sl := sliceToFill(unchanged, len(fresh)); sl != nil {
			c := sl.DeepCopy()
			c.Endpoints = append(c.Endpoints, fresh...)
			updates = append(updates, c)
			fresh = nil
		}
	}
	w.toUpdate = append(w.toUpdate, updates...)
	for len(fresh) > 0 {
		n := min(len(fresh), MaxEndpointsPerSlice)
		sl := newSlice(w.svc, ports)
		sl.Endpoints = append([]discoveryv1.Endpoint(nil), fresh[:n]...)
		fresh = fresh[n:]
		w.toCreate = append(w.toCreate, sl)
	}
}

// sliceToFill is the unchanged slice that ends closest to full with n more
// endpoints, or nil.
func sliceToFill(slices []*discoveryv1.EndpointSlice, n int) *discoveryv1.EndpointSlice {
	closest, best := MaxEndpointsPerSlice, (*discoveryv1.EndpointSlice)(nil)
	for _, sl := range slices {
		if diff := MaxEndpointsPerSlice - (n + len(sl.Endpoints)); diff >= 0 && diff < closest {
			closest, best = diff, sl
		}
	}
	return best
}

// finalize turns creates into updates of slices that would be deleted
// (keeping their names), then writes.
func (w *writer) finalize() bool {
	for i := 0; i < len(w.toDelete) && len(w.toCreate) > 0; {
		del, last := w.toDelete[i], w.toCreate[len(w.toCreate)-1]
		if del.AddressType != last.AddressType || !ownedBy(del, w.svc) {
			i++
			continue
		}
		c := del.DeepCopy()
		c.Labels, c.Ports, c.Endpoints = last.Labels, last.Ports, last.Endpoints
		w.toCreate = w.toCreate[:len(w.toCreate)-1]
		w.toUpdate = append(w.toUpdate, c)
		w.toDelete = append(w.toDelete[:i], w.toDelete[i+1:]...)
	}
	s := w.s
	changed := false
	// No new slices for a Service being deleted or in a namespace being
	// deleted (the API server refuses creates there).
	if w.svc.DeletionTimestamp == nil && !namespaceTerminating(s, w.svc.Namespace) {
		for _, sl := range w.toCreate {
			createSlice(s, w.svc, sl)
			changed = true
		}
	}
	for _, sl := range w.toUpdate {
		sl.Annotations = triggerAnnotation(sl.Annotations, s)
		sl.Generation++
		sl.ResourceVersion = s.Bump()
		s.EndpointSlices[cluster.Key(sl.Namespace, sl.Name)] = sl
		changed = true
	}
	if deleteSlices(s, w.toDelete) {
		changed = true
	}
	return changed
}

func deleteSlices(s *cluster.State, slices []*discoveryv1.EndpointSlice) bool {
	for _, sl := range slices {
		delete(s.EndpointSlices, cluster.Key(sl.Namespace, sl.Name))
		s.Bump()
	}
	return len(slices) > 0
}

// createSlice stores a new slice named "<service>-<five characters>". The
// characters and the uid come from a source derived from the cluster's seed
// and the Service, not from the cluster's shared random stream, so adding
// slices does not move every name and address drawn after them
// (docs/services.md).
func createSlice(s *cluster.State, svc *corev1.Service, sl *discoveryv1.EndpointSlice) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(svc.UID))
	r := cluster.NewRand(s.Seed ^ int64(h.Sum64()))
	for {
		name := sl.GenerateName + r.String(5)
		if _, taken := s.EndpointSlices[cluster.Key(sl.Namespace, name)]; !taken {
			sl.Name = name
			break
		}
	}
	sl.UID = types.UID(r.UID())
	sl.CreationTimestamp = metav1.NewTime(s.Now)
	sl.Generation = 1
	sl.Annotations = triggerAnnotation(sl.Annotations, s)
	sl.ResourceVersion = s.Bump()
	s.NoteCreated(sl.UID)
	s.EndpointSlices[cluster.Key(sl.Namespace, sl.Name)] = sl
}

// triggerAnnotation records when the change the slice reflects happened
// (endpoints.kubernetes.io/last-change-trigger-time). berth writes slices
// in the same virtual instant as the change, so that is now.
func triggerAnnotation(a map[string]string, s *cluster.State) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	out[corev1.EndpointsLastChangeTriggerTime] = s.Now.UTC().Format("2006-01-02T15:04:05.999999999Z07:00")
	return out
}

// newSlice is a slice of the Service with the given ports, not yet named.
func newSlice(svc *corev1.Service, ports []discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	if ports == nil {
		ports = []discoveryv1.EndpointPort{}
	}
	return &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    svc.Name + "-",
			Namespace:       svc.Namespace,
			Labels:          sliceLabels(svc),
			OwnerReferences: []metav1.OwnerReference{controllerutil.NewControllerRef(svc, "v1", "Service")},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       ports,
		Endpoints:   []discoveryv1.Endpoint{},
	}
}

// sliceLabels are the Service's labels (less the reserved ones) plus the
// service name, the manager and, for a headless Service, the headless mark.
func sliceLabels(svc *corev1.Service) map[string]string {
	out := map[string]string{}
	for k, v := range svc.Labels {
		switch k {
		case discoveryv1.LabelServiceName, discoveryv1.LabelManagedBy, corev1.IsHeadlessService:
			continue
		}
		out[k] = v
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		out[corev1.IsHeadlessService] = ""
	}
	out[discoveryv1.LabelServiceName] = svc.Name
	out[discoveryv1.LabelManagedBy] = ManagedBy
	return out
}

func ownedBy(sl *discoveryv1.EndpointSlice, svc *corev1.Service) bool {
	for _, o := range sl.OwnerReferences {
		if o.UID == svc.UID && o.Kind == "Service" && o.APIVersion == "v1" {
			return true
		}
	}
	return false
}

// samePlaceholder compares what placeholderSliceCompare compares: the
// generated-name prefix, owners, namespace, labels, ports and endpoints.
func samePlaceholder(a, b *discoveryv1.EndpointSlice) bool {
	return a.GenerateName == b.GenerateName && a.Namespace == b.Namespace &&
		apiequality.Semantic.DeepEqual(a.OwnerReferences, b.OwnerReferences) &&
		apiequality.Semantic.DeepEqual(a.Labels, b.Labels) &&
		len(a.Ports) == 0 && len(b.Ports) == 0 && len(a.Endpoints) == 0 && len(b.Endpoints) == 0
}

func namespaceTerminating(s *cluster.State, name string) bool {
	ns, ok := s.Namespaces[name]
	return ok && ns.Status.Phase == corev1.NamespaceTerminating
}
