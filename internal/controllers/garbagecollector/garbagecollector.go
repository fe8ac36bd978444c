// Package garbagecollector is the part of kube-controller-manager's garbage
// collector that berth needs: an object all of whose owners are gone is
// deleted (background cascading deletion), so deleting a Deployment takes its
// ReplicaSets and their pods, a DaemonSet or Job its pods, and a StatefulSet
// whose claims carry owner references (whenDeleted: Delete) its claims too.
package garbagecollector

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// Name is the controller's name.
const Name = "garbage-collector"

// Controller implements sim.Controller.
type Controller struct {
	quiet controllerutil.Quiet
	// none is the object set of the last pass, when it found every owner
	// reference live (noneMissing).
	none        cluster.ObjectSet
	noneMissing bool
	state       *cluster.State
}

// New returns the garbage collector.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync deletes every object whose owner references all name objects that no
// longer exist. It repeats until a pass deletes nothing, so chains
// (Deployment -> ReplicaSet -> Pod) go in one Sync.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	// A pass reads the objects and never the clock: after a pass that
	// changed nothing, the next ones at the same resource version would
	// find the same owners, at any instant
	// (docs/simulation-speed.md#passes-the-clock-does-not-change-session-23).
	if c.quiet.Skip(s) {
		return false, nil
	}
	// Whether some owner reference names a missing object depends only on
	// which objects exist and on their owner references. Those change when
	// an object is created, replaced or removed (cluster.ObjectSet), and
	// when a claim adds a reference (always to its live claimant) or
	// removes one: neither makes a reference dangle. So after a pass that
	// found every owner, the next ones find every owner too until the
	// object set changes, however many status writes come in between
	// (docs/simulation-speed.md#passes-over-a-set-of-objects-that-did-not-change-session-24).
	set := s.ObjectSet()
	if c.noneMissing && c.state == s && c.none == set {
		c.quiet.DoneAnyTime(s, false, true)
		return false, nil
	}
	c.noneMissing = false
	changed := c.sync(s)
	if !changed && c.noneMissing {
		c.none, c.state = set, s
	}
	c.quiet.DoneAnyTime(s, changed, true)
	return changed, nil
}

func (c *Controller) sync(s *cluster.State) bool {
	if !ownerMissing(s) {
		c.noneMissing = true
		return false
	}
	changed := false
	for {
		live := liveUIDs(s)
		deleted := false
		for _, k := range cluster.Kinds {
			for _, obj := range k.List(s) {
				m := obj.(metav1.Object)
				if !orphaned(m, live) {
					continue
				}
				if pod, ok := obj.(*corev1.Pod); ok {
					if pod.DeletionTimestamp != nil {
						continue // already Terminating: its kubelet finishes it
					}
					s.GracefulDeletePod(pod, nil)
				} else if wasDeleting := m.GetDeletionTimestamp() != nil; s.MarkDeleting(m) {
					// Karpenter's finalizer holds it: marked once, then left
					// to its termination controller.
					changed = changed || !wasDeleting
					continue
				} else {
					k.Remove(s, cluster.Key(m.GetNamespace(), m.GetName()))
					s.Bump()
				}
				deleted = true
			}
		}
		if !deleted {
			return changed
		}
		changed = true
	}
}

// ownerMissing reports whether some owner reference names an object that
// does not exist. When none does, no object can be orphaned, and the sync
// is one unordered pass without sorting: the usual case, as owners are
// rarely deleted (docs/simulation-speed.md#garbage-collector-one-check-per-owner-session-23).
// Each owner is checked once per pass, not once per dependent: 100,000
// pods have a few hundred owners.
func ownerMissing(s *cluster.State) bool {
	o := owners{s: s, known: map[types.UID]bool{}}
	missing := false
	for _, k := range cluster.Kinds {
		k.Each(s, func(m metav1.Object) {
			if missing {
				return
			}
			for _, r := range m.GetOwnerReferences() {
				if !o.live(m.GetNamespace(), r) {
					missing = true
					return
				}
			}
		})
		if missing {
			return true
		}
	}
	return false
}

// owners answers "does an object with this uid exist?" once per uid and
// pass. A reference is live when some stored object of any kind has its
// uid, whatever kind and name the reference gives (what the deleting pass
// checks). The object the reference names is looked up first: when it
// exists with that uid, the answer is yes without gathering every uid;
// otherwise the set of every uid, built once, decides.
type owners struct {
	s     *cluster.State
	known map[types.UID]bool
	all   map[types.UID]bool
}

func (o *owners) live(namespace string, r metav1.OwnerReference) bool {
	if v, ok := o.known[r.UID]; ok {
		return v
	}
	v := o.named(namespace, r) || o.anyWithUID(r.UID)
	o.known[r.UID] = v
	return v
}

// named reports whether the object the reference names exists with its uid.
func (o *owners) named(namespace string, r metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(r.APIVersion)
	if err != nil {
		return false
	}
	k := cluster.KindFor(schema.GroupKind{Group: gv.Group, Kind: r.Kind})
	if k == nil {
		return false
	}
	key := r.Name
	if k.Namespaced {
		key = cluster.Key(namespace, r.Name)
	}
	obj, ok := k.Get(o.s, key)
	if !ok {
		return false
	}
	m, ok := obj.(metav1.Object)
	return ok && m.GetUID() == r.UID
}

func (o *owners) anyWithUID(uid types.UID) bool {
	if o.all == nil {
		o.all = map[types.UID]bool{}
		for _, k := range cluster.Kinds {
			k.Each(o.s, func(m metav1.Object) { o.all[m.GetUID()] = true })
		}
	}
	return o.all[uid]
}

func liveUIDs(s *cluster.State) map[types.UID]bool {
	live := map[types.UID]bool{}
	for _, k := range cluster.Kinds {
		for _, obj := range k.List(s) {
			live[obj.(metav1.Object).GetUID()] = true
		}
	}
	return live
}

// orphaned: the object has owners and none of them exists any more.
func orphaned(m metav1.Object, live map[types.UID]bool) bool {
	refs := m.GetOwnerReferences()
	if len(refs) == 0 {
		return false
	}
	for _, r := range refs {
		if live[r.UID] {
			return false
		}
	}
	return true
}
