package cluster

import (
	"encoding/binary"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/store"
)

// TestSaveFullInBatches: a complete save of buckets several batches long
// (two encoded while one is written) stores under every key exactly the
// plain encoding of its object, and nothing else.
func TestSaveFullInBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("a state of tens of thousands of objects")
	}
	s := syntheticState(20, fullBatch+300, fullBatch+7)
	dir := t.TempDir()
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	got := dbContents(t, dir)
	l := stateLayout()
	for _, ob := range l.objects {
		want := map[string]string{}
		iter := reflect.ValueOf(s).Elem().Field(ob.field).MapRange()
		for iter.Next() {
			data, err := store.Encode(iter.Value().Interface().(runtime.Object), ob.kind.GVK)
			if err != nil {
				t.Fatal(err)
			}
			want[iter.Key().String()] = string(data)
		}
		if len(got[ob.name]) != len(want) {
			t.Errorf("bucket %s: %d entries, want %d", ob.name, len(got[ob.name]), len(want))
		}
		for k, v := range want {
			if got[ob.name][k] != v {
				t.Errorf("bucket %s key %s: stored value differs from the object's encoding", ob.name, k)
			}
		}
	}
	if len(got[eventsBucket]) != len(s.Events) {
		t.Errorf("%d events stored, want %d", len(got[eventsBucket]), len(s.Events))
	}
	for i, e := range s.Events {
		data, err := store.Encode(e, EventKind.GVK)
		if err != nil {
			t.Fatal(err)
		}
		if got[eventsBucket][string(binary.BigEndian.AppendUint64(nil, uint64(i+1)))] != string(data) {
			t.Errorf("event %d: stored value differs from its encoding", i+1)
		}
	}
}
