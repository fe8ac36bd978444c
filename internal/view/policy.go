package view

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// PodDisruptionBudgets: `get pdb` columns as printPodDisruptionBudget, and
// describe as kubectl's describePodDisruptionBudgetV1.
var pdbColumns = []metav1.TableColumnDefinition{nameCol(), col("Min Available"), col("Max Unavailable"),
	col("Allowed Disruptions"), col("Age")}

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
