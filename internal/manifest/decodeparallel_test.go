package manifest

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestDecodeParallelMatchesSequential decodes a file of a few hundred
// documents (good ones, a List, YAML and strict-decoding errors, unknown
// kinds) spread over the CPUs and one by one: same objects, same errors in
// the same order.
func TestDecodeParallelMatchesSequential(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 300; i++ {
		switch i % 10 {
		case 3:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\nspec:\n  nope: 1\n---\n", i)
		case 5:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d\n---\n", i)
		case 7:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Gadget\nmetadata:\n  name: g%d\n---\n", i)
		case 8:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: n%d\n- 3\n---\n", i)
		default:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n  labels:\n    app: a\nspec:\n  containers:\n  - name: c\n    image: i\n---\n", i)
		}
	}
	data := []byte(b.String())
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	par, parErr := Decode("f.yaml", data)
	saved := parallelFrom
	parallelFrom = 1 << 30
	seq, seqErr := Decode("f.yaml", data)
	parallelFrom = saved
	if parErr == nil || seqErr == nil || parErr.Error() != seqErr.Error() {
		t.Fatalf("errors differ:\n%v\n---\n%v", parErr, seqErr)
	}
	if len(par) != len(seq) || len(par) < 200 {
		t.Fatalf("%d objects in parallel, %d one by one", len(par), len(seq))
	}
	if !reflect.DeepEqual(par, seq) {
		t.Fatal("objects differ")
	}
}
