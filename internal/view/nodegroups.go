package view

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/cluster"
)

// Node groups print as berth's own table (kubectl has none for them, and
// eksctl's lacks the registered and Ready counts): the ASG's sizes, the
// nodes it has, the instance type and age; -o wide adds the ASG, its
// zones, the capacity type and cluster-autoscaler's view of the group
// (docs/cluster-autoscaler.md#node-group-views).
var nodeGroupColumns = []metav1.TableColumnDefinition{nameCol(), col("Min"), col("Desired"), col("Max"),
	col("Current"), col("Ready"), col("Instance Type"), col("Age"), wideCol("Capacity Type"), wideCol("Zones"),
	wideCol("Autoscaler"), wideCol("ASG Name")}

func nodeGroupRow(s *cluster.State, g *controller.NodeGroup) metav1.TableRow {
	return row(g, g.Name, g.Spec.MinSize, g.Spec.DesiredCapacity, g.Spec.MaxSize, g.Status.Nodes, g.Status.ReadyNodes,
		strings.Join(g.Spec.InstanceTypes, ","), since(s, g.CreationTimestamp), g.Spec.CapacityType,
		strings.Join(g.Spec.Zones, ","), autoscalerCell(g), g.Spec.AutoScalingGroupName)
}

// autoscalerCell sums cluster-autoscaler's view up: <none> for a group it
// does not manage, else its scale-up condition (Backoff, InProgress,
// NoActivity, Unhealthy), "-" before its first loop.
func autoscalerCell(g *controller.NodeGroup) string {
	a := g.Status.Autoscaler
	switch {
	case a == nil:
		return "<none>"
	case a.ScaleUp == "":
		return "-"
	}
	return a.ScaleUp
}

// describeNodeGroup prints the group, its ASG, its template (labels and
// taints), its sizes, and what cluster-autoscaler knows of it; the events
// are those cluster-autoscaler records on its status ConfigMap that name
// the group's ASG (scale-ups, failures, timeouts, scale-downs).
func describeNodeGroup(s *cluster.State, g *controller.NodeGroup) string {
	var events []*corev1.Event
	for _, e := range s.Events {
		if e.Source.Component == controller.Name && e.InvolvedObject.Kind == "ConfigMap" && strings.Contains(e.Message, g.Spec.AutoScalingGroupName) {
			events = append(events, e)
		}
	}
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", g.Name)
		kind := "self-managed"
		if g.Spec.Managed {
			kind = "managed"
		}
		w.write(level0, "Type:\t%s\n", kind)
		w.write(level0, "CreationTimestamp:\t%s\n", timeOrUnset(g.CreationTimestamp))
		w.write(level0, "Auto Scaling Group:\t%s\n", g.Spec.AutoScalingGroupName)
		w.write(level0, "Instance Types:\t%s\n", strings.Join(g.Spec.InstanceTypes, ", "))
		w.write(level0, "Capacity Type:\t%s\n", g.Spec.CapacityType)
		w.write(level0, "Zones:\t%s\n", strings.Join(g.Spec.Zones, ", "))
		printLabelsMultiline(w, "Labels", g.Spec.Labels)
		printTaintsMultiline(w, "Taints", g.Spec.Taints)
		printLabelsMultiline(w, "Tags", g.Spec.Tags)
		w.write(level0, "Size:\n")
		w.write(level1, "Min:\t%d\n", g.Spec.MinSize)
		w.write(level1, "Desired:\t%d\n", g.Spec.DesiredCapacity)
		w.write(level1, "Max:\t%d\n", g.Spec.MaxSize)
		w.write(level0, "Nodes:\n")
		w.write(level1, "Registered:\t%d\n", g.Status.Nodes)
		w.write(level1, "Ready:\t%d\n", g.Status.ReadyNodes)
		w.write(level1, "Launching:\t%d\n", g.Status.Launching)
		a := g.Status.Autoscaler
		if a == nil {
			w.write(level0, "Cluster Autoscaler:\t%s\n", "<not managed>")
		} else {
			w.write(level0, "Cluster Autoscaler:\n")
			w.write(level1, "Min Size:\t%d\n", a.MinSize)
			w.write(level1, "Max Size:\t%d\n", a.MaxSize)
			w.write(level1, "Health:\t%s\n", orUnknown(a.Health))
			w.write(level1, "Scale Up:\t%s\n", orUnknown(a.ScaleUp))
			w.write(level1, "Scale Down:\t%s\n", orUnknown(a.ScaleDown))
			if a.Backoff == nil {
				w.write(level1, "Backoff:\t%s\n", "<none>")
			} else {
				w.write(level1, "Backoff:\tuntil %s (%s left)\n", a.Backoff.Until.Time.Format(describeTimeFormat),
					shortDuration(s, a.Backoff.Until))
				w.write(level2, "Error Code:\t%s\n", a.Backoff.ErrorCode)
				w.write(level2, "Error Message:\t%s\n", a.Backoff.ErrorMessage)
			}
			w.write(level1, "Last Scale Up:\t%s\n", timePtr(a.LastScaleUp))
			w.write(level1, "Last Scale Down:\t%s\n", timePtr(a.LastScaleDown))
		}
		describeEvents(s, events, w)
	})
}

func timeOrUnset(t metav1.Time) string {
	if t.IsZero() {
		return "<unset>"
	}
	return t.Time.Format(describeTimeFormat)
}

func timePtr(t *metav1.Time) string {
	if t == nil {
		return "<none>"
	}
	return t.Time.Format(describeTimeFormat)
}

func shortDuration(s *cluster.State, until metav1.Time) string {
	d := until.Time.Sub(s.Now)
	if d < 0 {
		d = 0
	}
	return fmt.Sprint(d)
}
