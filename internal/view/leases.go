package view

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/cluster"
)

// Leases print as the API server's table printer prints them (NAME, HOLDER,
// AGE); kubectl has no Lease describer, so describe is the generic one
// (docs/node-lifecycle.md).
var leaseColumns = []metav1.TableColumnDefinition{nameCol(), col("Holder"), col("Age")}

func leaseRow(s *cluster.State, l *coordinationv1.Lease) metav1.TableRow {
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return row(l, l.Name, holder, since(s, l.CreationTimestamp))
}

func init() {
	builtins[schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}] = builtin{columns: leaseColumns, row: rowOf(leaseRow)}
}
