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
	ctx, cs := r.ctx, r.client
	live := map[string]bool{}
	// arrived holds, per object written, a check that the scheduler's
	// informers hold what was written.
	var arrived []func() bool
	sync := func(kind, ns, name, rv string, create, update func() error) error {
		id := kind + "/" + ns + "/" + name
		live[id] = true
		last, sent := r.mirror.sent[id]
		switch {
		case !sent:
			if err := create(); err != nil {
				return fmt.Errorf("upstream: mirror create %s: %w", id, err)
			}
		case last != rv && update != nil:
			if err := update(); err != nil {
				return fmt.Errorf("upstream: mirror update %s: %w", id, err)
			}
		default:
			r.mirror.sent[id] = rv
			return nil
		}
		r.mirror.sent[id] = rv
		arrived = append(arrived, r.informed(kind, ns, name))
		return r.throttle(&arrived)
	}
	for _, o := range w.Namespaces {
		if err := sync("namespace", "", o.Name, o.ResourceVersion, func() error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, strip(o), metav1.CreateOptions{})
			return err
		}, nil); err != nil {
			return err
		}
	}
	for _, o := range w.PriorityClasses {
		r.priorityClasses[o.Name] = o
		if err := sync("priorityclass", "", o.Name, o.ResourceVersion, func() error {
			_, err := cs.SchedulingV1().PriorityClasses().Create(ctx, strip(o), metav1.CreateOptions{})
			return err
		}, nil); err != nil {
			return err
		}
	}
	for _, o := range w.Nodes {
		if err := sync("node", "", o.Name, o.ResourceVersion, func() error {
			r.nodeNames = insertSorted(r.nodeNames, o.Name)
			_, err := cs.CoreV1().Nodes().Create(ctx, strip(o), metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := cs.CoreV1().Nodes().Update(ctx, strip(o), metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	for _, o := range w.StorageClasses {
		if err := sync("storageclass", "", o.Name, o.ResourceVersion, func() error {
			_, err := cs.StorageV1().StorageClasses().Create(ctx, strip(o), metav1.CreateOptions{})
			return err
		}, nil); err != nil {
			return err
		}
	}
	for _, o := range w.CSINodes {
		if err := sync("csinode", "", o.Name, o.ResourceVersion, func() error {
			_, err := cs.StorageV1().CSINodes().Create(ctx, strip(o), metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := cs.StorageV1().CSINodes().Update(ctx, strip(o), metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	for _, o := range w.PersistentVolumes {
		if err := sync("pv", "", o.Name, o.ResourceVersion, func() error {
			_, err := cs.CoreV1().PersistentVolumes().Create(ctx, strip(o), metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := cs.CoreV1().PersistentVolumes().Update(ctx, strip(o), metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	for _, o := range w.PersistentVolumeClaims {
		if err := sync("pvc", o.Namespace, o.Name, o.ResourceVersion, func() error {
			_, err := cs.CoreV1().PersistentVolumeClaims(o.Namespace).Create(ctx, strip(o), metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := cs.CoreV1().PersistentVolumeClaims(o.Namespace).Update(ctx, strip(o), metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	for _, o := range w.Services {
		if err := sync("service", o.Namespace, o.Name, o.ResourceVersion, func() error {
			_, err := cs.CoreV1().Services(o.Namespace).Create(ctx, strip(o), metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := cs.CoreV1().Services(o.Namespace).Update(ctx, strip(o), metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	for _, o := range w.ReplicaSets {
		if err := sync("replicaset", o.Namespace, o.Name, o.ResourceVersion, func() error {
			_, err := cs.AppsV1().ReplicaSets(o.Namespace).Create(ctx, strip(o), metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := cs.AppsV1().ReplicaSets(o.Namespace).Update(ctx, strip(o), metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	for _, o := range w.StatefulSets {
		if err := sync("statefulset", o.Namespace, o.Name, o.ResourceVersion, func() error {
			_, err := cs.AppsV1().StatefulSets(o.Namespace).Create(ctx, strip(o), metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := cs.AppsV1().StatefulSets(o.Namespace).Update(ctx, strip(o), metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	pending := 0
	for _, o := range w.Pods {
		key := o.Namespace + "/" + o.Name
		wrote, err := r.mirrorPod(o, key, w.Attempted[key], live)
		if err != nil {
			return err
		}
		if wrote {
			arrived = append(arrived, r.informed("pod", o.Namespace, o.Name))
			if err := r.throttle(&arrived); err != nil {
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
			for _, ok := range arrived {
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
		for _, ok := range arrived {
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

// informed returns a check that the informer's copy of an object equals
// the API's (creations and updates reach listers asynchronously).
func (r *Runner) informed(kind, ns, name string) func() bool {
	var gvr schema.GroupVersionResource
	var lister func() (k8sruntime.Object, error)
	core, storage, apps := r.informers.Core().V1(), r.informers.Storage().V1(), r.informers.Apps().V1()
	switch kind {
	case "namespace":
		gvr, lister = v1.SchemeGroupVersion.WithResource("namespaces"), func() (k8sruntime.Object, error) { return core.Namespaces().Lister().Get(name) }
	case "node":
		gvr, lister = v1.SchemeGroupVersion.WithResource("nodes"), func() (k8sruntime.Object, error) { return core.Nodes().Lister().Get(name) }
	case "pv":
		gvr, lister = v1.SchemeGroupVersion.WithResource("persistentvolumes"), func() (k8sruntime.Object, error) { return core.PersistentVolumes().Lister().Get(name) }
	case "pvc":
		gvr, lister = v1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), func() (k8sruntime.Object, error) {
			return core.PersistentVolumeClaims().Lister().PersistentVolumeClaims(ns).Get(name)
		}
	case "service":
		gvr, lister = v1.SchemeGroupVersion.WithResource("services"), func() (k8sruntime.Object, error) { return core.Services().Lister().Services(ns).Get(name) }
	case "storageclass":
		gvr, lister = storagev1.SchemeGroupVersion.WithResource("storageclasses"), func() (k8sruntime.Object, error) { return storage.StorageClasses().Lister().Get(name) }
	case "csinode":
		gvr, lister = storagev1.SchemeGroupVersion.WithResource("csinodes"), func() (k8sruntime.Object, error) { return storage.CSINodes().Lister().Get(name) }
	case "replicaset":
		gvr, lister = appsv1.SchemeGroupVersion.WithResource("replicasets"), func() (k8sruntime.Object, error) { return apps.ReplicaSets().Lister().ReplicaSets(ns).Get(name) }
	case "pod":
		gvr, lister = podsResource, func() (k8sruntime.Object, error) { return core.Pods().Lister().Pods(ns).Get(name) }
	case "statefulset":
		gvr, lister = appsv1.SchemeGroupVersion.WithResource("statefulsets"), func() (k8sruntime.Object, error) { return apps.StatefulSets().Lister().StatefulSets(ns).Get(name) }
	default:
		return func() bool { return true }
	}
	return func() bool {
		want, err := r.client.Tracker().Get(gvr, ns, name)
		if err != nil {
			return false
		}
		got, err := lister()
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
	id := "pod/" + key
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
	delete(r.mirror.sent, "pod/"+key)
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
	kind, ns, name := parts[0], parts[1], parts[2]
	ctx, cs := r.ctx, r.client
	var err error
	switch kind {
	case "pod":
		if r.mirror.held[ns+"/"+name] != nil {
			return r.release(ns + "/" + name)
		}
		err = cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
	case "node":
		err = cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	case "pv":
		err = cs.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
	case "pvc":
		err = cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name, metav1.DeleteOptions{})
	case "service":
		err = cs.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{})
	case "replicaset":
		err = cs.AppsV1().ReplicaSets(ns).Delete(ctx, name, metav1.DeleteOptions{})
	case "statefulset":
		err = cs.AppsV1().StatefulSets(ns).Delete(ctx, name, metav1.DeleteOptions{})
	case "csinode":
		err = cs.StorageV1().CSINodes().Delete(ctx, name, metav1.DeleteOptions{})
	default:
		return nil
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
