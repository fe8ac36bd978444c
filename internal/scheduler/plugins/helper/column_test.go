package helper

import (
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// TestColumnFollowsSnapshots checks that a column reads like the node's own
// labels, is rebuilt for a new snapshot (where labels may have changed) and
// reads nodes it was not built over directly.
func TestColumnFollowsSnapshots(t *testing.T) {
	a, b := zoneNode("a", "z1"), zoneNode("b", "z2")
	delete(b.Node.Labels, "zone")
	h := &logHandle{nodes: []*framework.NodeInfo{a, b}, id: 1}
	x := NewClassDomainIndex()
	x.Update(h, h.nodes)
	col := x.Column("zone")
	for _, ni := range h.nodes {
		v, ok := col.Get(ni)
		wv, wok := ni.Node.Labels["zone"]
		if v != wv || ok != wok {
			t.Fatalf("%s: column %q %v, labels %q %v", ni.Name(), v, ok, wv, wok)
		}
	}
	if x.Column("zone") != col {
		t.Fatal("a column must be built once per snapshot")
	}
	// A new snapshot with relabelled nodes gets a new column.
	a2, b2 := zoneNode("a", "z3"), zoneNode("b", "z2")
	h2 := &logHandle{nodes: []*framework.NodeInfo{a2, b2}, id: 2}
	x.Update(h2, h2.nodes)
	col2 := x.Column("zone")
	if v, _ := col2.Get(a2); v != "z3" {
		t.Fatalf("after relabel a = %q, want z3", v)
	}
	if v, ok := col2.Get(b2); v != "z2" || !ok {
		t.Fatalf("after relabel b = %q %v, want z2", v, ok)
	}
	// The old column is left as it was, for states that still hold it.
	if v, _ := col.Get(a); v != "z1" {
		t.Fatalf("old column changed: a = %q", v)
	}
	// A node outside the snapshot (a copy) is read from its labels.
	other := zoneNode("c", "z9")
	if v, ok := col2.Get(other); v != "z9" || !ok {
		t.Fatalf("foreign node = %q %v, want z9", v, ok)
	}
}
