package replicaset

import (
	"maps"
	"slices"
	"strings"
	"unsafe"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podIndex groups pods by controller UID (and orphans by namespace) in one
// pass over the state, so a sync is linear in the number of pods. Pods
// this controller creates or deletes for a ReplicaSet update that set's
// group only (touch); adopting or releasing pods rebuilds the whole index.
// The same walk tallies each set's pods
// (docs/simulation-speed.md#replicaset-one-walk-per-set-session-23).
//
// The index outlives its pass (docs/simulation-speed.md#session-24-round-2-rs):
// while the state's object set has not changed, the groups hold the same
// pods, and the next pass walks the groups instead of every pod of the
// state, reading each pod's status but not matching its labels again.
type podIndex struct {
	s       *cluster.State
	dirty   bool
	byOwner map[types.UID]*ownerGroup
	orphans map[string]*ownerGroup
	// sorted holds, for this pass, key-ordered copies of groups ("o/"+uid
	// for owners, "n/"+namespace for orphans). The groups themselves keep
	// their order, which their members' notes follow.
	sorted map[string][]*corev1.Pod
	// clockBound: some set's sync depended on the clock this pass (see
	// syncReplicaSet).
	clockBound bool
	// reuse: the groups were kept from an earlier pass at an unchanged
	// object set; ensure checks each member's notes and walks the groups.
	reuse bool
}

// ownerGroup is the pods one controller UID names, and, when exactly one
// ReplicaSet (with a valid selector) has that UID, its tally as of the
// walk. A sync writes only its own set's pods (touch drops that set's
// tally) or rebuilds the index (claims), and nothing else writes pods
// during the controller's pass, so a kept tally is the one tallyGroup
// would compute when the set's sync reads it.
type ownerGroup struct {
	pods []*corev1.Pod
	// notes[i] is what the index remembers of pods[i].
	notes    []podNote
	set      *appsv1.ReplicaSet
	selector func(map[string]string) bool
	tally    tally
	tallied  bool
	// matchedBy is what the notes' matches and full were computed
	// against: the set's selector and template labels, copied.
	matchedBy *appsv1.ReplicaSetSpec
}

// podNote is what a kept index remembers of one pod: the identity of its
// labels map and of its owner references (backing array and length), to
// see that they are still the ones the pod was grouped and matched by;
// and, once known, whether the set's selector matches the labels and
// whether they carry all of the template's labels.
//
// The identities suffice because nothing in berth edits a stored pod's
// labels map in place (a label change comes with a new pod through
// admission's Update, which moves the object set), and owner references
// change in place only by claims, which append or drop a reference and so
// change the length, or by a new slice.
type podNote struct {
	labels, refs  unsafe.Pointer
	nrefs         int
	known         bool
	matches, full bool
}

func noteOf(p *corev1.Pod) podNote {
	return podNote{labels: mapIdentity(p.Labels), refs: unsafe.Pointer(unsafe.SliceData(p.OwnerReferences)), nrefs: len(p.OwnerReferences)}
}

// same reports whether p still has the labels map and owner references n
// was taken from.
func (n *podNote) same(p *corev1.Pod) bool {
	return n.labels == mapIdentity(p.Labels) && n.refs == unsafe.Pointer(unsafe.SliceData(p.OwnerReferences)) && n.nrefs == len(p.OwnerReferences)
}

// mapIdentity is the map's header pointer (a map value is one pointer).
func mapIdentity(m map[string]string) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

func (g *ownerGroup) add(p *corev1.Pod) {
	g.pods = append(g.pods, p)
	g.notes = append(g.notes, noteOf(p))
}

// matchSpec copies what a set's matches depend on.
func matchSpec(rs *appsv1.ReplicaSet) *appsv1.ReplicaSetSpec {
	return &appsv1.ReplicaSetSpec{Selector: rs.Spec.Selector.DeepCopy(), Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(rs.Spec.Template.Labels)}}}
}

func sameMatchSpec(a *appsv1.ReplicaSetSpec, rs *appsv1.ReplicaSet) bool {
	return a != nil && apiequality.Semantic.DeepEqual(a.Selector, rs.Spec.Selector) && maps.Equal(a.Template.Labels, rs.Spec.Template.Labels)
}

func (ix *podIndex) ensure() {
	if ix.reuse {
		ix.reuse = false
		if ix.walkKept() {
			return
		}
		ix.dirty = true
	}
	if !ix.dirty {
		return
	}
	ix.byOwner = map[types.UID]*ownerGroup{}
	ix.orphans = map[string]*ownerGroup{}
	ix.sorted = map[string][]*corev1.Pod{}
	for _, rs := range ix.s.ReplicaSets {
		if ix.byOwner[rs.UID] != nil {
			// Two sets with one UID (hand-made states): the other one
			// gets its tally from tallyGroup (tally checks the set).
			continue
		}
		g := &ownerGroup{}
		if sel, err := controllerutil.SelectorMatcher(rs.Spec.Selector); err == nil {
			g.set, g.selector, g.tallied, g.matchedBy = rs, sel, true, matchSpec(rs)
		}
		ix.byOwner[rs.UID] = g
	}
	now := ix.s.Now
	for _, p := range ix.s.Pods {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
			g := ix.byOwner[ref.UID]
			if g == nil {
				g = &ownerGroup{}
				ix.byOwner[ref.UID] = g
			}
			g.add(p)
			if g.tallied {
				n := &g.notes[len(g.notes)-1]
				g.tally.addNoted(g.set, p, g.match(p, n), now)
			}
		} else {
			g := ix.orphans[p.Namespace]
			if g == nil {
				g = &ownerGroup{}
				ix.orphans[p.Namespace] = g
			}
			g.add(p)
		}
	}
	ix.dirty = false
}

// match fills n's matches for p when not yet known and returns n.
func (g *ownerGroup) match(p *corev1.Pod, n *podNote) *podNote {
	if !n.known && p.DeletionTimestamp == nil {
		// A pod being deleted is never counted, and never stops being
		// deleted: its note stays unknown.
		n.matches = g.selector(p.Labels)
		n.full = controllerutil.HasLabels(p.Labels, g.set.Spec.Template.Labels)
		n.known = true
	}
	return n
}

// walkKept tallies the kept groups again, checking that every member
// still has the labels and owner references it was noted with. It
// reports false, leaving the index to be rebuilt, when one has not.
func (ix *podIndex) walkKept() bool {
	now := ix.s.Now
	ix.sorted = map[string][]*corev1.Pod{}
	for _, g := range ix.orphans {
		for i, p := range g.pods {
			if !g.notes[i].same(p) {
				return false
			}
		}
	}
	for _, g := range ix.byOwner {
		g.tally, g.tallied = tally{}, g.set != nil
		if g.set != nil {
			if !sameMatchSpec(g.matchedBy, g.set) {
				sel, err := controllerutil.SelectorMatcher(g.set.Spec.Selector)
				if err != nil {
					return false
				}
				g.selector, g.matchedBy = sel, matchSpec(g.set)
				for i := range g.notes {
					g.notes[i].known = false
				}
			}
		}
		for i, p := range g.pods {
			n := &g.notes[i]
			if !n.same(p) {
				return false
			}
			if g.tallied {
				g.tally.addNoted(g.set, p, g.match(p, n), now)
			}
		}
	}
	return true
}

// index returns the index for a new pass at s: the one kept from the last
// pass when it was complete and the object set has not changed since,
// else a fresh one.
func (c *Controller) index(s *cluster.State) *podIndex {
	if k := c.kept; k != nil && k.s == s && c.keptSet == s.ObjectSet() {
		c.kept = nil
		k.reuse, k.clockBound = true, false
		return k
	}
	c.kept = nil
	return &podIndex{s: s, dirty: true}
}

// keep remembers ix for the next pass: it is complete when its last
// rebuild saw every pod and only touches followed (the pods this pass
// created or deleted).
func (c *Controller) keep(s *cluster.State, ix *podIndex) {
	if ix.dirty || ix.reuse || ix.byOwner == nil {
		return
	}
	c.kept, c.keptSet = ix, s.ObjectSet()
}

// inKeyOrder returns a group's pods in key order, sorted once per pass.
func (ix *podIndex) inKeyOrder(mark string, pods []*corev1.Pod) []*corev1.Pod {
	if out, ok := ix.sorted[mark]; ok {
		return out
	}
	out := slices.Clone(pods)
	sortByKey(out)
	ix.sorted[mark] = out
	return out
}

func sortByKey(pods []*corev1.Pod) {
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			// Keys are "namespace/name": compare as the joined strings do.
			return strings.Compare(cluster.Key(a.Namespace, a.Name), cluster.Key(b.Namespace, b.Name))
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// touch brings rs's group up to date after this controller created the
// pods in added and deleted some of the group's pods; the set's tally is
// recomputed when next read.
func (ix *podIndex) touch(rs *appsv1.ReplicaSet, added []*corev1.Pod) {
	if ix.dirty {
		return
	}
	g := ix.byOwner[rs.UID]
	if g == nil {
		g = &ownerGroup{}
		ix.byOwner[rs.UID] = g
	}
	kept, notes := g.pods[:0:0], g.notes[:0:0]
	for i, p := range g.pods {
		if ix.s.Pods[cluster.Key(p.Namespace, p.Name)] == p {
			kept, notes = append(kept, p), append(notes, g.notes[i])
		}
	}
	g.pods, g.notes = kept, notes
	for _, p := range added {
		g.add(p)
	}
	g.tallied = false
	delete(ix.sorted, "o/"+string(rs.UID))
}

// tally returns rs's tally: the walk's when it holds for rs, else one
// walk over rs's group.
func (ix *podIndex) tally(rs *appsv1.ReplicaSet, selector func(map[string]string) bool) tally {
	ix.ensure()
	if g := ix.byOwner[rs.UID]; g != nil && g.tallied && g.set == rs {
		return g.tally
	}
	return tallyGroup(rs, ix.group(rs), selector, ix.s.Now)
}

// owned returns every pod rs controls, whatever its phase, in key order.
func (ix *podIndex) owned(rs *appsv1.ReplicaSet) []*corev1.Pod {
	ix.ensure()
	return ix.inKeyOrder("o/"+string(rs.UID), ix.group(rs))
}

// orphansIn returns the pods without a controller in namespace ns, in no
// particular order.
func (ix *podIndex) orphansIn(ns string) []*corev1.Pod {
	ix.ensure()
	if g := ix.orphans[ns]; g != nil {
		return g.pods
	}
	return nil
}

// group returns every pod rs controls in no particular order: for the
// readers that only count or look for one (docs/simulation-speed.md). At
// 100,000 pods, putting every group in key order on every pass cost more
// than the rest of a pass that changes nothing.
func (ix *podIndex) group(rs *appsv1.ReplicaSet) []*corev1.Pod {
	ix.ensure()
	if g := ix.byOwner[rs.UID]; g != nil {
		return g.pods
	}
	return nil
}
