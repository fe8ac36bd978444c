package app

import (
	"bytes"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/store"
	"github.com/berth-sim/berth/internal/view"
)

// ReadScope says which part of the stored state a read-only command loads:
// most commands print one or two kinds and few events or none, and
// decoding the rest of a large cluster is most of their time
// (docs/state.md#speed). The zero value loads the whole state; anything
// in doubt loads it whole.
type ReadScope struct {
	// Part loads only what the fields below name.
	Part bool
	// Kinds are the kinds loaded (nil: every kind).
	Kinds []*cluster.Kind
	// About names the objects a describe prints: only their events are
	// loaded (none when empty), and for Describe "Pod" or "Node" only the
	// objects the describer reads about them.
	About    []string
	Describe string
}

// The kinds a describe of named pods or nodes reads, by the registry.
var (
	podKind   = kindOf(schema.GroupKind{Kind: "Pod"})
	nodeKind  = kindOf(schema.GroupKind{Kind: "Node"})
	leaseKind = kindOf(schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"})
)

func kindOf(gk schema.GroupKind) *cluster.Kind {
	for _, k := range cluster.Kinds {
		if k.GVK.GroupKind() == gk {
			return k
		}
	}
	panic("app: no kind " + gk.String())
}

// Field numbers of the stored protobuf encodings the pickers read without
// decoding: Pod.spec is 2, PodSpec.nodeName 10.
const (
	podSpecField     = 2
	podNodeNameField = 10
)

func (r ReadScope) loader() func(dir string) (*cluster.State, error) {
	if !r.Part {
		return cluster.Load
	}
	scope := cluster.Scope{Kinds: r.Kinds, Objects: map[*cluster.Kind]func(key, value []byte) bool{}}
	names := slices.Clone(r.About)
	named := func(name []byte) bool { return slices.Contains(names, string(name)) }
	if len(names) > 0 {
		scope.Events = func(name string) bool { return slices.Contains(names, name) }
	}
	// Pickers keep a superset of what the describers read: objects that
	// may be named so (in any namespace), pods that may be bound there.
	keyName := func(key []byte) []byte {
		if i := bytes.LastIndexByte(key, '/'); i >= 0 {
			return key[i+1:]
		}
		return key
	}
	switch r.Describe {
	case "Pod":
		scope.Objects[podKind] = func(key, _ []byte) bool { return named(keyName(key)) }
	case "Node":
		scope.Objects[nodeKind] = func(key, _ []byte) bool { return named(key) }
		scope.Objects[leaseKind] = func(key, _ []byte) bool {
			ns, name, _ := bytes.Cut(key, []byte("/"))
			return string(ns) == corev1.NamespaceNodeLease && named(name)
		}
		scope.Objects[podKind] = func(_, value []byte) bool {
			node, ok := store.Field(value, podSpecField, podNodeNameField)
			return !ok || named(node)
		}
	}
	return func(dir string) (*cluster.State, error) { return cluster.LoadSome(dir, scope) }
}

// getWhole are the kinds whose `get` output reads more than their own
// objects and the clock: events themselves, node groups (their
// cluster-autoscaler status comes from events) and Fargate profiles (their
// describer and rows look at pods). A `get` naming one loads everything.
var getWhole = []schema.GroupKind{
	{Kind: "Event"}, controller.NodeGroupGVK.GroupKind(), cluster.FargateProfileGVK.GroupKind(),
}

// GetScope is the scope of `berth get ARGS`: the kinds it names and no
// events, unless it names one of getWhole. Any argument it cannot resolve
// to one kind (a category such as "all", a typo) loads the whole state.
func GetScope(args []string) ReadScope {
	types := argTypes(args)
	if len(types) == 0 {
		return ReadScope{}
	}
	var kinds []*cluster.Kind
	for _, typ := range types {
		res, err := view.LookupResource(typ)
		if err != nil || slices.Contains(getWhole, res.GVK().GroupKind()) {
			return ReadScope{}
		}
		if !slices.Contains(kinds, res.Kind()) {
			kinds = append(kinds, res.Kind())
		}
	}
	return ReadScope{Part: true, Kinds: kinds}
}

// DescribeScope is the scope of `berth describe`: pods and nodes named
// without a selector read only themselves, their events (their describers
// search events by name) and, for a node, its lease and the pods bound to
// it; everything else loads the whole state.
func DescribeScope(r DescribeRequest) ReadScope {
	if len(r.Args) == 0 || r.Selector != "" {
		return ReadScope{}
	}
	kind, names := r.Args[0], r.Args[1:]
	if _, _, ok := splitTypeName(kind); ok {
		kind, names = "", nil
		for _, arg := range r.Args {
			typ, name, ok := splitTypeName(arg)
			if !ok || (kind != "" && typ != kind) {
				return ReadScope{}
			}
			kind, names = typ, append(names, name)
		}
	}
	res, err := view.LookupResource(kind)
	if err != nil || len(names) == 0 {
		return ReadScope{}
	}
	switch res.Kind() {
	case podKind:
		return ReadScope{Part: true, Kinds: []*cluster.Kind{podKind}, About: names, Describe: "Pod"}
	case nodeKind:
		return ReadScope{Part: true, Kinds: []*cluster.Kind{nodeKind, leaseKind, podKind}, About: names, Describe: "Node"}
	}
	return ReadScope{}
}

// argTypes returns the resource types `get` arguments name.
func argTypes(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	if _, _, ok := splitTypeName(args[0]); !ok {
		return strings.Split(args[0], ",")
	}
	var types []string
	for _, arg := range args {
		typ, _, _ := splitTypeName(arg)
		types = append(types, typ)
	}
	return types
}
