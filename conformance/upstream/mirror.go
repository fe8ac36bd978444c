package upstream

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/berth-sim/berth/conformance/scenario"
)

// End-to-end mode. Another simulator (berth, running `berth apply` whole)
// owns the cluster; upstream's API is kept a mirror of it, and upstream's
// own scheduling queue decides which pod comes next. Before each pod's first
// attempt the mirror is brought up to date (Mirror): objects created,
// changed or deleted since, pending pods created in the other side's
// creation order, pods the other side bound on a later attempt created
// bound, and nominations of pods that failed kept in upstream's nominator.
// Then ScheduleNext runs one ScheduleOne on whatever upstream's queue pops.
//
// A pod that fails is removed after its attempt (as in the one-pod mode).
// If it nominated a node, the next Mirror puts it back as a held pod: a copy
// carrying a scheduling gate of the harness's own, so that it waits in
// upstream's unschedulablePods and never pops, with its nomination in the
// nominator. Later pods then see the room it holds, as they do in a cluster
// where the preemptor waits in the queue. (The nominator only accepts pods
// its pod lister holds unbound, and hands filters the queue's copy of a
// nominated pod, a bare name when the queue has none: a nomination without
// a queued pod would count for nothing.)

// World is the other side's cluster at one moment.
type World struct {
	Namespaces      []*v1.Namespace
	PriorityClasses []*schedulingv1.PriorityClass
	// Nodes in the order the other side's cache inserted them.
	Nodes                  []*v1.Node
	StorageClasses         []*storagev1.StorageClass
	PersistentVolumes      []*v1.PersistentVolume
	PersistentVolumeClaims []*v1.PersistentVolumeClaim
	CSINodes               []*storagev1.CSINode
	Services               []*v1.Service
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	// Pods that are not terminal, in creation order.
	Pods []*v1.Pod
	// Attempted holds the pods whose first attempt is over (namespace/name).
	Attempted map[string]bool
}

// mirrorState is what Mirror has sent: per object, the other side's
// resourceVersion at the time.
type mirrorState struct {
	sent map[string]string
	// held is the gated copy of each retired pod that holds a nomination.
	held map[string]*v1.Pod
	// nominate lists the held pods whose nomination the nominator still
	// needs, once the informers hold them.
	nominate []*v1.Pod
}

// StartEmpty starts a scheduler over an empty cluster, for Mirror.
func (r *Runner) StartEmpty(percentage int32) error {
	if err := r.Load(&scenario.Scenario{Name: "end-to-end", PercentageOfNodesToScore: percentage}); err != nil {
		return err
	}
	r.mirror = &mirrorState{sent: map[string]string{}, held: map[string]*v1.Pod{}}
	return nil
}

// Mirror makes upstream's API equal to w and waits until the scheduler's
// cache and queue have caught up.
func (r *Runner) Mirror(w *World) error {
	if r.mirror == nil {
		return errors.New("upstream: Mirror before StartEmpty")
	}
	m := &mirrorRun{r: r, live: map[string]bool{}}
	for _, o := range w.PriorityClasses {
		r.priorityClasses[o.Name] = o
	}
	for _, o := range w.Nodes {
		if _, sent := r.mirror.sent[resourceID(nodesResource, o)]; !sent {
			r.nodeNames = insertSorted(r.nodeNames, o.Name)
		}
	}
	steps := []error{
		mirrorAll(m, namespacesResource, w.Namespaces),
		mirrorAll(m, priorityClassesResource, w.PriorityClasses),
		mirrorAll(m, nodesResource, w.Nodes),
		mirrorAll(m, storageClassesResource, w.StorageClasses),
		mirrorAll(m, csiNodesResource, w.CSINodes),
		mirrorAll(m, pvsResource, w.PersistentVolumes),
		mirrorAll(m, pvcsResource, w.PersistentVolumeClaims),
		mirrorAll(m, servicesResource, w.Services),
		mirrorAll(m, replicaSetsResource, w.ReplicaSets),
		mirrorAll(m, statefulSetsResource, w.StatefulSets),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	live := m.live
	pending := 0
	for _, o := range w.Pods {
		key := o.Namespace + "/" + o.Name
		wrote, err := r.mirrorPod(o, key, w.Attempted[key], live)
		if err != nil {
			return err
		}
		if wrote {
			if err := m.wrote(podsResource, o.Namespace, o.Name); err != nil {
				return err
			}
		}
		if o.Spec.NodeName == "" && !w.Attempted[key] {
			pending++
		}
	}

	// Whatever the other side no longer has goes, pods first.
	for id := range r.mirror.sent {
		if live[id] {
			continue
		}
		if err := r.mirrorDelete(id); err != nil {
			return err
		}
		delete(r.mirror.sent, id)
	}
	if len(r.mirror.nominate) > 0 {
		if err := r.waitFor("held pods to reach the queue", func() bool {
			for _, ok := range m.arrived {
				if !ok() {
					return false
				}
			}
			_, summary := r.sched.SchedulingQueue.PendingPods()
			return strings.HasSuffix(summary, fmt.Sprintf("unschedulablePods:%d", len(r.mirror.held)))
		}); err != nil {
			return err
		}
		for _, p := range r.mirror.nominate {
			if err := r.nominateHeld(p); err != nil {
				return err
			}
		}
		r.mirror.nominate = nil
	}
	return r.waitFor("mirror to reach the scheduler", func() bool {
		for _, ok := range m.arrived {
			if !ok() {
				return false
			}
		}
		// A late event about a retired pod's earlier self (same UID) may
		// have taken a held nomination away: put it back.
		for _, p := range r.mirror.held {
			if !r.nominated(p) {
				if os.Getenv("BERTH_E2E_DEBUG") != "" {
					fmt.Fprintf(os.Stderr, "upstream: held nomination of %s/%s lost, restored\n", p.Namespace, p.Name)
				}
				_ = r.nominateHeld(p)
				return false
			}
		}
		_, summary := r.sched.SchedulingQueue.PendingPods()
		count, err := r.sched.Cache.PodCount()
		nodes := 0
		for _, info := range r.sched.Cache.Dump().Nodes {
			if info.Node() != nil {
				nodes++
			}
		}
		return err == nil && count == r.boundCount() && nodes == len(w.Nodes) &&
			summary == fmt.Sprintf("activeQ:%d; backoffQ:0; unschedulablePods:%d", pending, len(r.mirror.held))
	})
}

// Resources Mirror copies. watched are the ones the scheduler's informers
// read, whose arrival Mirror waits for.
var (
	namespacesResource      = v1.SchemeGroupVersion.WithResource("namespaces")
	nodesResource           = v1.SchemeGroupVersion.WithResource("nodes")
	pvsResource             = v1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcsResource            = v1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	servicesResource        = v1.SchemeGroupVersion.WithResource("services")
	storageClassesResource  = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	csiNodesResource        = storagev1.SchemeGroupVersion.WithResource("csinodes")
	replicaSetsResource     = appsv1.SchemeGroupVersion.WithResource("replicasets")
	statefulSetsResource    = appsv1.SchemeGroupVersion.WithResource("statefulsets")
	priorityClassesResource = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")

	watched = map[schema.GroupVersionResource]bool{namespacesResource: true, nodesResource: true, pvsResource: true,
		pvcsResource: true, servicesResource: true, storageClassesResource: true, csiNodesResource: true,
		replicaSetsResource: true, statefulSetsResource: true, podsResource: true}
)

// mirrorRun is one Mirror call's bookkeeping: the objects the other side
// still has, and a check per write that the informers hold it.
type mirrorRun struct {
	r       *Runner
	live    map[string]bool
	arrived []func() bool
}

func resourceID(gvr schema.GroupVersionResource, o metav1.Object) string {
	return gvr.Resource + "/" + o.GetNamespace() + "/" + o.GetName()
}

// mirrorAll creates or updates, straight in the fake API's tracker, every
// object that is new or changed since the last Mirror.
func mirrorAll[T interface {
	metav1.Object
	k8sruntime.Object
}](m *mirrorRun, gvr schema.GroupVersionResource, objs []T) error {
	tracker := m.r.client.Tracker()
	for _, o := range objs {
		id := resourceID(gvr, o)
		m.live[id] = true
		last, sent := m.r.mirror.sent[id]
		var err error
		switch {
		case !sent:
			err = tracker.Create(gvr, strip(o), o.GetNamespace())
		case last != o.GetResourceVersion():
			err = tracker.Update(gvr, strip(o), o.GetNamespace())
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("upstream: mirror %s: %w", id, err)
		}
		m.r.mirror.sent[id] = o.GetResourceVersion()
		if err := m.wrote(gvr, o.GetNamespace(), o.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// wrote notes a write the scheduler must see before the next cycle.
func (m *mirrorRun) wrote(gvr schema.GroupVersionResource, ns, name string) error {
	if !watched[gvr] {
		return nil
	}
	m.arrived = append(m.arrived, m.r.informed(gvr, ns, name))
	return m.r.throttle(&m.arrived)
}

// informed returns a check that the informer's copy of an object equals
// the API's (creations and updates reach listers asynchronously).
func (r *Runner) informed(gvr schema.GroupVersionResource, ns, name string) func() bool {
	gi, err := r.informers.ForResource(gvr)
	if err != nil {
		return func() bool { return false }
	}
	return func() bool {
		want, err := r.client.Tracker().Get(gvr, ns, name)
		if err != nil {
			return false
		}
		var got k8sruntime.Object
		if ns == "" {
			got, err = gi.Lister().Get(name)
		} else {
			got, err = gi.Lister().ByNamespace(ns).Get(name)
		}
		return err == nil && apiequality.Semantic.DeepEqual(got, want)
	}
}

// throttle waits for the informers after every few writes: the fake API's
// watch channels hold 100 events and panic when full.
func (r *Runner) throttle(arrived *[]func() bool) error {
	if len(*arrived)%50 != 0 {
		return nil
	}
	return r.waitFor("informers to catch up", func() bool {
		for _, ok := range *arrived {
			if !ok() {
				return false
			}
		}
		return true
	})
}

// mirrorPod brings one pod of the other side into upstream's API.
func (r *Runner) mirrorPod(o *v1.Pod, key string, attempted bool, live map[string]bool) (bool, error) {
	ctx, pods := r.ctx, r.client.CoreV1().Pods(o.Namespace)
	id := "pods/" + key
	if o.Spec.NodeName == "" && attempted {
		// Retired after its failed attempt: only its nomination stays.
		return r.hold(key, id, o, live)
	}
	live[id] = true
	cur, err := r.client.Tracker().Get(podsResource, o.Namespace, o.Name)
	exists := err == nil
	if last, sent := r.mirror.sent[id]; sent && last == o.ResourceVersion && exists {
		return false, nil
	}
	if r.mirror.held[key] != nil {
		if err := r.release(key); err != nil {
			return false, err
		}
		exists = false
	}
	switch {
	case o.Spec.NodeName == "" && !exists:
		// A new pending pod: it enters upstream's queue now, in creation order.
		p := strip(o)
		p.Status = v1.PodStatus{Phase: v1.PodPending}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return false, fmt.Errorf("upstream: mirror create %s: %w", id, err)
		}
	case o.Spec.NodeName == "":
		// Still pending, changed by something other than the scheduler: the
		// queue keeps its copy; nothing a cycle reads has changed.
	case exists && cur.(*v1.Pod).Spec.NodeName == o.Spec.NodeName:
		if _, err := pods.Update(ctx, strip(o), metav1.UpdateOptions{}); err != nil {
			return false, fmt.Errorf("upstream: mirror update %s: %w", id, err)
		}
	default:
		if exists {
			if err := pods.Delete(ctx, o.Name, metav1.DeleteOptions{}); err != nil {
				return false, fmt.Errorf("upstream: mirror replace %s: %w", id, err)
			}
		}
		if _, err := pods.Create(ctx, strip(o), metav1.CreateOptions{}); err != nil {
			return false, fmt.Errorf("upstream: mirror create bound %s: %w", id, err)
		}
	}
	r.mirror.sent[id] = o.ResourceVersion
	return o.Spec.NodeName != "" || !exists, nil
}

// heldGate is the scheduling gate that keeps held pods out of upstream's
// activeQ.
const heldGate = "berth.conformance/held"

// hold keeps a retired pod's nomination in upstream, where a pod waiting in
// a real queue would keep it: as a gated copy whose nomination Mirror adds
// to the nominator once the informers hold it.
func (r *Runner) hold(key, id string, o *v1.Pod, live map[string]bool) (bool, error) {
	old := r.mirror.held[key]
	if old != nil && old.Status.NominatedNodeName == o.Status.NominatedNodeName {
		live[id] = true
		return false, nil
	}
	if err := r.release(key); err != nil {
		return false, err
	}
	if o.Status.NominatedNodeName == "" {
		return false, nil
	}
	p := strip(o)
	p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: heldGate})
	p.Status = v1.PodStatus{Phase: v1.PodPending, NominatedNodeName: o.Status.NominatedNodeName}
	created, err := r.client.CoreV1().Pods(p.Namespace).Create(r.ctx, p, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("upstream: mirror hold %s: %w", id, err)
	}
	live[id] = true
	r.mirror.sent[id] = o.ResourceVersion
	r.mirror.held[key] = created
	r.mirror.nominate = append(r.mirror.nominate, created)
	return true, nil
}

// nominateHeld puts a held pod's nomination into upstream's nominator.
func (r *Runner) nominateHeld(p *v1.Pod) error {
	pi, err := framework.NewPodInfo(p)
	if err != nil {
		return err
	}
	r.sched.SchedulingQueue.AddNominatedPod(klog.Background(), pi,
		&fwk.NominatingInfo{NominatedNodeName: p.Status.NominatedNodeName, NominatingMode: fwk.ModeOverride})
	return nil
}

// nominated tells whether upstream's nominator holds p's nomination.
func (r *Runner) nominated(p *v1.Pod) bool {
	for _, pi := range r.sched.SchedulingQueue.NominatedPodsForNode(p.Status.NominatedNodeName) {
		if pi.GetPod().UID == p.UID {
			return true
		}
	}
	return false
}

// release deletes a held pod's copy, and its nomination with it.
func (r *Runner) release(key string) error {
	p := r.mirror.held[key]
	if p == nil {
		return nil
	}
	delete(r.mirror.held, key)
	delete(r.mirror.sent, "pods/"+key)
	for i, q := range r.mirror.nominate {
		if q == p {
			r.mirror.nominate = append(r.mirror.nominate[:i:i], r.mirror.nominate[i+1:]...)
			break
		}
	}
	err := r.client.CoreV1().Pods(p.Namespace).Delete(r.ctx, p.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("upstream: mirror release %s: %w", key, err)
	}
	return nil
}

// mirrorDelete removes an object the other side deleted (upstream may have
// deleted it already, as a preemption victim).
func (r *Runner) mirrorDelete(id string) error {
	parts := splitID(id)
	resource, ns, name := parts[0], parts[1], parts[2]
	var err error
	if resource == podsResource.Resource {
		if r.mirror.held[ns+"/"+name] != nil {
			return r.release(ns + "/" + name)
		}
		// Through the client: its reactor keeps the count of bound pods.
		err = r.client.CoreV1().Pods(ns).Delete(r.ctx, name, metav1.DeleteOptions{})
	} else {
		for gvr := range watched {
			if gvr.Resource == resource {
				err = r.client.Tracker().Delete(gvr, ns, name)
			}
		}
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("upstream: mirror delete %s: %w", id, err)
	}
	return nil
}

// ScheduleNext runs one scheduling cycle on the pod upstream's queue pops
// and reports it (PodResult.Pod names the popped pod). align works as in
// Schedule.
func (r *Runner) ScheduleNext(align string) (scenario.PodResult, error) {
	pods, _ := r.sched.SchedulingQueue.PendingPods()
	if len(pods) <= len(r.mirror.held) {
		return scenario.PodResult{}, errors.New("upstream: nothing in the queue")
	}
	r.obs = newObservation()
	r.align = align
	left := len(pods) - 1
	return r.runCycle(nil, len(r.events.snapshot()), func() bool {
		pods, _ := r.sched.SchedulingQueue.PendingPods()
		return len(pods) == left
	})
}

func splitID(id string) [3]string {
	var out [3]string
	for i, part := range strings.SplitN(id, "/", 3) {
		out[i] = part
	}
	return out
}

// strip returns a copy without the server-owned fields the fake tracker
// would take as a precondition.
func strip[T interface {
	metav1.Object
	DeepCopyObject() k8sruntime.Object
}](o T) T {
	c := o.DeepCopyObject().(T)
	c.SetResourceVersion("")
	c.SetManagedFields(nil)
	return c
}

func insertSorted(names []string, name string) []string {
	i := sort.SearchStrings(names, name)
	names = append(names, "")
	copy(names[i+1:], names[i:])
	names[i] = name
	return names
}
