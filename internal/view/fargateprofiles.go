package view

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/fargate"
)

// Fargate profiles print as `eksctl get fargateprofile` prints them: one row
// per selector, with eksctl's column names; AGE only with -o wide, so the
// default table is eksctl's (docs/fargate.md#profiles-in-berth-get-and-describe).
var fargateProfileColumns = []metav1.TableColumnDefinition{nameCol(), col("Selector_Namespace"), col("Selector_Labels"),
	col("Pod_Execution_Role_ARN"), col("Subnets"), col("Tags"), col("Status"), wideCol("Age")}

// fargateProfileRows are the table rows of one profile. eksctl's table
// sorts its rows by every column; within a profile that is by selector
// namespace, then labels.
func fargateProfileRows(s *cluster.State, p *cluster.FargateProfile) []metav1.TableRow {
	type sel struct{ namespace, labels string }
	sels := make([]sel, 0, len(p.Selectors))
	for _, x := range p.Selectors {
		sels = append(sels, sel{x.Namespace, labels.FormatLabels(x.Labels)})
	}
	sort.SliceStable(sels, func(i, j int) bool {
		if sels[i].namespace != sels[j].namespace {
			return sels[i].namespace < sels[j].namespace
		}
		return sels[i].labels < sels[j].labels
	})
	rows := make([]metav1.TableRow, 0, len(sels))
	for _, x := range sels {
		rows = append(rows, row(p, p.Name, x.namespace, x.labels, orNone(p.PodExecutionRoleARN),
			subnetsText(p.Subnets, ","), labels.FormatLabels(p.Tags), p.Status, since(s, p.CreationTimestamp)))
	}
	return rows
}

func subnetsText(subnets []string, sep string) string {
	if len(subnets) == 0 {
		return "<none>"
	}
	return strings.Join(subnets, sep)
}

// describeFargateProfile is berth's describer for a profile (kubectl has
// none for it): the profile as EKS describes it, then the pods it placed
// on Fargate, with their nodes and sizes.
func describeFargateProfile(s *cluster.State, p *cluster.FargateProfile) string {
	events := eventQuery{kind: p.Kind, name: p.Name, uids: uidsOf(p)}.find(s)
	var pods []*corev1.Pod
	for _, key := range cluster.SortedKeys(s.Pods) {
		if pod := s.Pods[key]; pod.Labels[fargate.LabelProfile] == p.Name && pod.Spec.SchedulerName == fargate.SchedulerName {
			pods = append(pods, pod)
		}
	}
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", p.Name)
		printLabelsMultiline(w, "Labels", p.Labels)
		printAnnotationsMultiline(w, "Annotations", p.Annotations)
		w.write(level0, "CreationTimestamp:\t%s\n", p.CreationTimestamp.Time.Format(describeTimeFormat))
		w.write(level0, "Status:\t%s\n", p.Status)
		w.write(level0, "Pod Execution Role ARN:\t%s\n", orNone(p.PodExecutionRoleARN))
		w.write(level0, "Subnets:\t%s\n", subnetsText(p.Subnets, ", "))
		printLabelsMultiline(w, "Tags", p.Tags)
		w.write(level0, "Selectors:\n")
		for _, sel := range p.Selectors {
			w.write(level1, "Namespace:\t%s\n", sel.Namespace)
			w.write(level1, "Labels:\t%s\n", labels.FormatLabels(sel.Labels))
		}
		if len(pods) == 0 {
			w.write(level0, "Pods:\t%s\n", "<none>")
		} else {
			w.write(level0, "Pods:\n")
			w.write(level1, "Namespace\tName\tNode\tCapacity Provisioned\tAge\n")
			w.write(level1, "---------\t----\t----\t--------------------\t---\n")
			for _, pod := range pods {
				w.write(level1, "%s\t%s\t%s\t%s\t%s\n", pod.Namespace, pod.Name, orNone(pod.Spec.NodeName),
					orNone(pod.Annotations[fargate.AnnotationCapacityProvisioned]), since(s, pod.CreationTimestamp))
			}
		}
		describeEvents(s, events, w)
	})
}
