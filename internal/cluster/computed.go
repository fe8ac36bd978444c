package cluster

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// NewComputedKind describes a read-only kind whose objects are views built
// from the state on every list (node groups: docs/cluster-autoscaler.md#node-group-views).
// It is served by get and describe only; it is not in Kinds, so apply,
// delete, the garbage collector and namespace deletion never see it.
func NewComputedKind(k Kind, list func(s *State) []runtime.Object, proto runtime.Object) *Kind {
	typ := reflect.TypeOf(proto)
	k.list = list
	k.get = func(s *State, key string) (runtime.Object, bool) {
		for _, obj := range list(s) {
			if m, ok := obj.(interface {
				GetNamespace() string
				GetName() string
			}); ok && Key(m.GetNamespace(), m.GetName()) == key {
				return obj, true
			}
		}
		return nil, false
	}
	k.put = func(*State, string, runtime.Object) {}
	k.remove = func(*State, string) {}
	k.match = func(obj runtime.Object) bool { return reflect.TypeOf(obj) == typ }
	k.ensure = func(*State) {}
	k.newObj = func() runtime.Object { return reflect.New(typ.Elem()).Interface().(runtime.Object) }
	k.eachUID = func(*State, func(types.UID)) {}
	return &k
}
