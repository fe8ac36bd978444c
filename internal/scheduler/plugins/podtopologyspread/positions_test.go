package podtopologyspread

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestPositionsOf checks positionsOf against the position map for nodes
// whose Index is right, stale (a number another list gave them, or out of
// range) or a copy's, in search order from a start and out of order, and
// that a node missing from the list yields nil.
func TestPositionsOf(t *testing.T) {
	all := make([]*framework.NodeInfo, 30)
	pos := map[*framework.NodeInfo]int32{}
	for i := range all {
		all[i] = framework.NewNodeInfo(pt.Node(fmt.Sprintf("n%02d", i), nil))
		all[i].Index = int32(i)
		pos[all[i]] = int32(i)
	}
	stale := func(i int, idx int32) *framework.NodeInfo { all[i].Index = idx; return all[i] }
	outside := framework.NewNodeInfo(pt.Node("outside", nil))
	outside.Index = 3
	for _, tc := range []struct {
		name  string
		nodes []*framework.NodeInfo
		want  []int32
	}{
		{"search order from a start", []*framework.NodeInfo{all[25], all[27], all[29], all[1], all[2]}, []int32{25, 27, 29, 1, 2}},
		{"out of order", []*framework.NodeInfo{all[10], all[0], all[20], all[5]}, []int32{10, 0, 20, 5}},
		{"stale index", []*framework.NodeInfo{all[4], stale(6, 9), stale(7, 99), stale(8, -1), all[20]}, []int32{4, 6, 7, 8, 20}},
		{"not in the list", []*framework.NodeInfo{all[1], outside}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := positionsOf(nil, all, tc.nodes, pos)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("got %v, want nil", got)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
