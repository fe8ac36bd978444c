package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestMarshalMetaMatchesEncodingJSON: the hand-written createRevisions
// encoding is byte-identical to encoding/json's, escapes included.
func TestMarshalMetaMatchesEncodingJSON(t *testing.T) {
	many := map[types.UID]int64{}
	for i := 0; i < 1000; i++ {
		many[types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i*7919, i))] = int64(i*31 - 500)
	}
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"nil map", map[types.UID]int64(nil)},
		{"empty map", map[types.UID]int64{}},
		{"one", map[types.UID]int64{"a1b2": 7}},
		{"order and extremes", map[types.UID]int64{"b": -9223372036854775808, "a": 9223372036854775807, "A": 0, "a-": 1}},
		{"many uids", many},
		{"quote", map[types.UID]int64{`x"y`: 1, "z": 2}},
		{"html", map[types.UID]int64{"<a>&": 1}},
		{"control", map[types.UID]int64{"tab\there": 1}},
		{"unicode", map[types.UID]int64{"é\u2028": 1}},
		{"other meta type", map[string]int{"x": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshalMeta(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("marshalMeta = %s\nencoding/json = %s", got, want)
			}
		})
	}
}
