package describe

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"      // internal core types in legacyscheme
	_ "k8s.io/kubernetes/pkg/apis/discovery/install" // internal discovery types
	kprinters "k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/view"
)

// tableKinds are the kinds whose `get` table is compared with the API
// server's own table printer (k8s.io/kubernetes/pkg/printers/internalversion)
// as kubectl prints it: the ones berth added for Services' endpoints.
var tableKinds = []schema.GroupKind{{Kind: "Endpoints"}, {Group: "discovery.k8s.io", Kind: "EndpointSlice"}}

// CompareTables prints `get KIND NAME -n NS` for every object of
// tableKinds with the API server's printer and kubectl's table printer,
// and with berth. Like Compare, it runs where time.Now is s.Now.
func CompareTables(s *cluster.State) ([]Result, error) {
	gen := kprinters.NewTableGenerator().With(printersinternal.AddHandlers)
	var out []Result
	for _, gk := range tableKinds {
		k := cluster.KindFor(gk)
		if k == nil {
			return nil, fmt.Errorf("%v is not a berth kind", gk)
		}
		resource := k.Resource
		if gk.Group != "" {
			resource += "." + gk.Group
		}
		for _, obj := range k.List(s) {
			u, err := toUnstructured(k, obj)
			if err != nil {
				return nil, err
			}
			r := Result{Kind: gk.String() + " (get)", Key: objectKey(u)}
			internal, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), runtime.InternalGroupVersioner)
			if err != nil {
				return nil, err
			}
			table, err := gen.GenerateTable(internal, kprinters.GenerateOptions{})
			if err != nil {
				return nil, err
			}
			var want bytes.Buffer
			if err := printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(table, &want); err != nil {
				return nil, err
			}
			r.Kubectl = want.String()
			var got bytes.Buffer
			if err := view.Get(&got, s, view.GetOptions{Args: []string{resource, u.GetName()}, Namespace: u.GetNamespace()}); err != nil {
				fmt.Fprintf(&got, "error: %v", err)
			}
			r.Berth = got.String()
			out = append(out, r)
		}
	}
	return out, nil
}
