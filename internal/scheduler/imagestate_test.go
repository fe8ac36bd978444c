package scheduler

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestImageStateSizeFromFirstInsertedNode: the cache keeps the size reported
// by the first node added with an image, even when the node tree lists
// another node first; a name listed twice on one node counts that node once.
func TestImageStateSizeFromFirstInsertedNode(t *testing.T) {
	withImage := func(n *v1.Node, zone string, size int64, names ...string) *v1.Node {
		n.Labels[v1.LabelTopologyZone] = zone
		if len(names) > 0 {
			n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: names, SizeBytes: size})
		}
		return n
	}
	tests := []struct {
		name      string
		order     []string
		wantSize  int64
		wantNodes int
	}{
		// Node o has no image. Inserted o, c, b the tree is o, b, c: the
		// first node with the image is c by insertion but b in the tree.
		{"o c b", []string{"o", "c", "b"}, 300, 2},
		{"o b c", []string{"o", "b", "c"}, 200, 2},
		{"c o b", []string{"c", "o", "b"}, 300, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := cluster.New("1.36", 1)
			nodes := map[string]*v1.Node{
				"o": withImage(plugintest.SizedNode("o", "4", "8Gi", 110), "z1", 0),
				"b": withImage(plugintest.SizedNode("b", "4", "8Gi", 110), "z2", 200, "img:1", "img:1"),
				"c": withImage(plugintest.SizedNode("c", "4", "8Gi", 110), "z1", 300, "img:1"),
			}
			for _, name := range tt.order {
				s.Nodes[name] = nodes[name]
				s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, name)
			}
			sc := New()
			if err := sc.ensureFramework(s); err != nil {
				t.Fatal(err)
			}
			sc.buildSnapshot(s)
			for _, ni := range sc.handle.snap.nodes {
				if ni.Name() == "o" {
					continue
				}
				st := ni.ImageStates["img:1"]
				if st == nil || st.Size != tt.wantSize || st.NumNodes != tt.wantNodes {
					t.Errorf("node %s: image state %+v, want size %d on %d nodes", ni.Name(), st, tt.wantSize, tt.wantNodes)
				}
			}
		})
	}
}
