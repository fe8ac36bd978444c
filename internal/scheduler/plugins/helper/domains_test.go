package helper

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/version"
)

// logHandle is a handle whose snapshot logs added pods.
type logHandle struct {
	framework.Handle
	nodes []*framework.NodeInfo
	id    uint64
	added []AddedPod
}

func (h *logHandle) Nodes() []*framework.NodeInfo    { return h.nodes }
func (h *logHandle) AddedPods() (uint64, []AddedPod) { return h.id, h.added }
func (h *logHandle) Features() version.Features      { return version.Features{} }
func (h *logHandle) add(ni *framework.NodeInfo, p *v1.Pod) {
	pi := framework.NewPodInfo(p, true)
	ni.AddPod(pi)
	h.added = append(h.added, AddedPod{Node: ni, Pod: pi})
}

func zoneNode(name, zone string) *framework.NodeInfo {
	return framework.NewNodeInfo(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": zone}}})
}

func appPod(name, app string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{"app": app}}}
}

// countOf sums the counts of classes labelled app=app in domain v.
func countOf(x *ClassDomainIndex, key, app, v string) int64 {
	var n int64
	kd := x.Key(key)
	for c, m := range kd.ByClass {
		if x.Classes().Class(int32(c)).Labels["app"] == app {
			n += m[v]
		}
	}
	return n
}

func TestClassDomainIndexFollowsLog(t *testing.T) {
	a, b := zoneNode("a", "z1"), zoneNode("b", "z2")
	h := &logHandle{nodes: []*framework.NodeInfo{a, b}, id: 1}
	h.add(a, appPod("p0", "web"))
	x := NewClassDomainIndex()
	if !x.Update(h, h.nodes) {
		t.Fatal("Update with a logging handle must be reusable")
	}
	if got := countOf(x, "zone", "web", "z1"); got != 1 {
		t.Fatalf("z1 web = %d, want 1", got)
	}
	// A pod bound after the index was built shows up on the next Update.
	h.add(b, appPod("p1", "web"))
	h.add(b, appPod("p2", "db"))
	x.Update(h, h.nodes)
	if got := countOf(x, "zone", "web", "z2"); got != 1 {
		t.Fatalf("z2 web = %d, want 1", got)
	}
	if got := countOf(x, "zone", "db", "z2"); got != 1 {
		t.Fatalf("z2 db = %d, want 1", got)
	}
	if _, ok := x.Key("zone").Values["z2"]; !ok || len(x.Key("zone").Values) != 2 {
		t.Fatalf("values = %v", x.Key("zone").Values)
	}
	// A new snapshot (pods removed from b) forces a rebuild.
	b2 := zoneNode("b", "z2")
	h2 := &logHandle{nodes: []*framework.NodeInfo{a, b2}, id: 2}
	x.Update(h2, h2.nodes)
	if got := countOf(x, "zone", "web", "z2"); got != 0 {
		t.Fatalf("after new snapshot z2 web = %d, want 0", got)
	}
	// Nodes that are not the handle's list are indexed afresh, not cached.
	if x.Update(h2, []*framework.NodeInfo{a}) {
		t.Fatal("Update over a foreign node list must report not reusable")
	}
	if got := countOf(x, "zone", "web", "z1"); got != 1 {
		t.Fatalf("foreign list z1 web = %d, want 1", got)
	}
}
