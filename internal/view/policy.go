package view

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/cluster"
)

// PodDisruptionBudgets: `get pdb` columns as printPodDisruptionBudget, and
// describe as kubectl's describePodDisruptionBudgetV1.
var (
	pdbColumns = []metav1.TableColumnDefinition{nameCol(), col("Min Available"), col("Max Unavailable"),
		col("Allowed Disruptions"), col("Age")}

	pdbType = &resourceType{
		plural: "poddisruptionbudgets", aliases: []string{"poddisruptionbudget", "pdb"},
		gvk: policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), namespaced: true, columns: pdbColumns,
		list: func(s *cluster.State, n string) []runtime.Object {
			return listMap(s.PodDisruptionBudgets, n, ns[*policyv1.PodDisruptionBudget])
		},
		row: func(s *cluster.State, o runtime.Object) metav1.TableRow {
			return pdbRow(s, o.(*policyv1.PodDisruptionBudget))
		},
		fields: func(o runtime.Object) fields.Set { return metaFields(o.(metav1.Object), true) },
	}
)

func init() {
	resourceTypes = append(resourceTypes, pdbType)
	describers[pdbType] = func(s *cluster.State, o runtime.Object) string {
		return describePDB(s, o.(*policyv1.PodDisruptionBudget))
	}
}

func pdbRow(s *cluster.State, pdb *policyv1.PodDisruptionBudget) metav1.TableRow {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if pdb.Spec.MinAvailable != nil {
		minAvailable = pdb.Spec.MinAvailable.String()
	}
	if pdb.Spec.MaxUnavailable != nil {
		maxUnavailable = pdb.Spec.MaxUnavailable.String()
	}
	return row(pdb, pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), since(s, pdb.CreationTimestamp))
}

func describePDB(s *cluster.State, pdb *policyv1.PodDisruptionBudget) string {
	events := eventQuery{kind: "PodDisruptionBudget", namespace: pdb.Namespace, name: pdb.Name, uids: uidsOf(pdb)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", pdb.Name)
		w.write(level0, "Namespace:\t%s\n", pdb.Namespace)
		if pdb.Spec.MinAvailable != nil {
			w.write(level0, "Min available:\t%s\n", pdb.Spec.MinAvailable.String())
		} else if pdb.Spec.MaxUnavailable != nil {
			w.write(level0, "Max unavailable:\t%s\n", pdb.Spec.MaxUnavailable.String())
		}
		if pdb.Spec.Selector != nil {
			w.write(level0, "Selector:\t%s\n", metav1.FormatLabelSelector(pdb.Spec.Selector))
		} else {
			w.write(level0, "Selector:\t<unset>\n")
		}
		w.write(level0, "Status:\n")
		w.write(level2, "Allowed disruptions:\t%d\n", pdb.Status.DisruptionsAllowed)
		w.write(level2, "Current:\t%d\n", pdb.Status.CurrentHealthy)
		w.write(level2, "Desired:\t%d\n", pdb.Status.DesiredHealthy)
		w.write(level2, "Total:\t%d\n", pdb.Status.ExpectedPods)
		describeEvents(s, events, w)
	})
}
