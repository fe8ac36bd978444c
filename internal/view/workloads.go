package view

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/berth-sim/berth/internal/cluster"
)

// Columns of the server-side printers for DaemonSets, StatefulSets and Jobs.
var (
	daemonSetColumns = []metav1.TableColumnDefinition{nameCol(), col("Desired"), col("Current"), col("Ready"), col("Up-to-date"),
		col("Available"), col("Node Selector"), col("Age"), wideCol("Containers"), wideCol("Images"), wideCol("Selector")}
	statefulSetColumns = []metav1.TableColumnDefinition{nameCol(), col("Ready"), col("Age"), wideCol("Containers"), wideCol("Images")}
	jobColumns         = []metav1.TableColumnDefinition{nameCol(), col("Status"), col("Completions"), col("Duration"), col("Age"),
		wideCol("Containers"), wideCol("Images"), wideCol("Selector")}
)

func jobFields(o runtime.Object) fields.Set {
	j := o.(*batchv1.Job)
	set := metaFields(j, true)
	set["status.successful"] = fmt.Sprint(j.Status.Succeeded)
	return set
}

func daemonSetRow(s *cluster.State, ds *appsv1.DaemonSet) metav1.TableRow {
	names, images := containerCells(ds.Spec.Template.Spec.Containers)
	st := ds.Status
	return row(ds, ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
		int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
		since(s, ds.CreationTimestamp), names, images, metav1.FormatLabelSelector(ds.Spec.Selector))
}

func statefulSetRow(s *cluster.State, set *appsv1.StatefulSet) metav1.TableRow {
	names, images := containerCells(set.Spec.Template.Spec.Containers)
	return row(set, set.Name, fmt.Sprintf("%d/%d", set.Status.ReadyReplicas, replicas(set.Spec.Replicas)),
		since(s, set.CreationTimestamp), names, images)
}

func jobRow(s *cluster.State, j *batchv1.Job) metav1.TableRow {
	var completions string
	switch {
	case j.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	case j.Spec.Parallelism != nil && *j.Spec.Parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, *j.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
	}
	names, images := containerCells(j.Spec.Template.Spec.Containers)
	return row(j, j.Name, jobStatusText(j), completions, jobDuration(s, j), since(s, j.CreationTimestamp),
		names, images, metav1.FormatLabelSelector(j.Spec.Selector))
}

// jobDuration is empty before the start, time since the start while
// running, and start to completion once done.
func jobDuration(s *cluster.State, j *batchv1.Job) string {
	switch {
	case j.Status.StartTime == nil:
		return ""
	case j.Status.CompletionTime == nil:
		return duration.HumanDuration(s.Now.Sub(j.Status.StartTime.Time))
	}
	return duration.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
}

func jobStatusText(j *batchv1.Job) string {
	has := func(t batchv1.JobConditionType) bool {
		for _, c := range j.Status.Conditions {
			if c.Type == t && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	}
	switch {
	case has(batchv1.JobComplete):
		return "Complete"
	case has(batchv1.JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case has(batchv1.JobSuspended):
		return "Suspended"
	case has(batchv1.JobFailureTarget):
		return "FailureTarget"
	}
	return "Running"
}

// daemonSetStatus is kubectl's DaemonSetStatusViewer.
func daemonSetStatus(obj runtime.Object) (string, bool, error) {
	ds := obj.(*appsv1.DaemonSet)
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		return "", true, fmt.Errorf("error: rollout status is only available for %s strategy type", appsv1.RollingUpdateDaemonSetStrategyType)
	}
	st := ds.Status
	switch {
	case ds.Generation > st.ObservedGeneration:
		return "Waiting for daemon set spec update to be observed...\n", false, nil
	case st.UpdatedNumberScheduled < st.DesiredNumberScheduled:
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...\n", ds.Name, st.UpdatedNumberScheduled, st.DesiredNumberScheduled), false, nil
	case st.NumberAvailable < st.DesiredNumberScheduled:
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...\n", ds.Name, st.NumberAvailable, st.DesiredNumberScheduled), false, nil
	}
	return fmt.Sprintf("daemon set %q successfully rolled out\n", ds.Name), true, nil
}

// statefulSetStatus is kubectl's StatefulSetStatusViewer.
func statefulSetStatus(obj runtime.Object) (string, bool, error) {
	set := obj.(*appsv1.StatefulSet)
	if set.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		return "", true, fmt.Errorf("error: rollout status is only available for %s strategy type", appsv1.RollingUpdateStatefulSetStrategyType)
	}
	st := set.Status
	want := int32(replicas(set.Spec.Replicas))
	if set.Status.ObservedGeneration == 0 || set.Generation > st.ObservedGeneration {
		return "Waiting for statefulset spec update to be observed...\n", false, nil
	}
	if st.ReadyReplicas < want {
		return fmt.Sprintf("Waiting for %d pods to be ready...\n", want-st.ReadyReplicas), false, nil
	}
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.Partition != nil && st.UpdatedReplicas < want-*ru.Partition {
			return fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...\n",
				st.UpdatedReplicas, want-*ru.Partition), false, nil
		}
		return fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...\n", st.UpdatedReplicas), true, nil
	}
	if st.UpdateRevision != st.CurrentRevision {
		return fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...\n", st.UpdatedReplicas, st.UpdateRevision), false, nil
	}
	return fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...\n", st.CurrentReplicas, st.CurrentRevision), true, nil
}

func describeDaemonSetObj(s *cluster.State, obj runtime.Object) string {
	ds := obj.(*appsv1.DaemonSet)
	running, waiting, succeeded, failed := podPhaseCounts(s, ds.Namespace, ds.Spec.Selector, ds.UID)
	events := eventQuery{kind: "DaemonSet", namespace: ds.Namespace, name: ds.Name, uids: uidsOf(ds)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", ds.Name)
		w.write(level0, "Namespace:\t%s\n", ds.Namespace)
		w.write(level0, "Selector:\t%s\n", metav1.FormatLabelSelector(ds.Spec.Selector))
		w.write(level0, "Node-Selector:\t%s\n", labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector))
		printLabelsMultiline(w, "Labels", ds.Labels)
		printAnnotationsMultiline(w, "Annotations", ds.Annotations)
		st := ds.Status
		w.write(level0, "Desired Number of Nodes Scheduled: %d\n", st.DesiredNumberScheduled)
		w.write(level0, "Current Number of Nodes Scheduled: %d\n", st.CurrentNumberScheduled)
		w.write(level0, "Number of Nodes Scheduled with Up-to-date Pods: %d\n", st.UpdatedNumberScheduled)
		w.write(level0, "Number of Nodes Scheduled with Available Pods: %d\n", st.NumberAvailable)
		w.write(level0, "Number of Nodes Misscheduled: %d\n", st.NumberMisscheduled)
		w.write(level0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
		describePodTemplate(&ds.Spec.Template, w)
		describeEvents(s, events, w)
	})
}

func describeStatefulSetObj(s *cluster.State, obj runtime.Object) string {
	set := obj.(*appsv1.StatefulSet)
	running, waiting, succeeded, failed := podPhaseCounts(s, set.Namespace, set.Spec.Selector, set.UID)
	events := eventQuery{kind: "StatefulSet", namespace: set.Namespace, name: set.Name, uids: uidsOf(set)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", set.Name)
		w.write(level0, "Namespace:\t%s\n", set.Namespace)
		w.write(level0, "CreationTimestamp:\t%s\n", set.CreationTimestamp.Time.Format(describeTimeFormat))
		w.write(level0, "Selector:\t%s\n", metav1.FormatLabelSelector(set.Spec.Selector))
		printLabelsMultiline(w, "Labels", set.Labels)
		printAnnotationsMultiline(w, "Annotations", set.Annotations)
		w.write(level0, "Replicas:\t%d desired | %d total\n", replicas(set.Spec.Replicas), set.Status.Replicas)
		w.write(level0, "Update Strategy:\t%s\n", set.Spec.UpdateStrategy.Type)
		if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			w.write(level1, "Partition:\t%d\n", *ru.Partition)
		}
		w.write(level0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
		describePodTemplate(&set.Spec.Template, w)
		describeClaimTemplates(set.Spec.VolumeClaimTemplates, w)
		describeEvents(s, events, w)
	})
}

// describeClaimTemplates is kubectl's describeVolumeClaimTemplates.
func describeClaimTemplates(templates []corev1.PersistentVolumeClaim, w prefixWriter) {
	if len(templates) == 0 {
		w.write(level0, "Volume Claims:\t<none>\n")
		return
	}
	w.write(level0, "Volume Claims:\n")
	for _, pvc := range templates {
		w.write(level1, "Name:\t%s\n", pvc.Name)
		sc := ""
		if pvc.Spec.StorageClassName != nil {
			sc = *pvc.Spec.StorageClassName
		}
		w.write(level1, "StorageClass:\t%s\n", sc)
		printLabelsMultilineWithIndent(w, "  ", "Labels", "\t", pvc.Labels)
		printLabelsMultilineWithIndent(w, "  ", "Annotations", "\t", pvc.Annotations)
		if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			w.write(level1, "Capacity:\t%s\n", q.String())
		} else {
			w.write(level1, "Capacity:\t%s\n", "<default>")
		}
		var modes []string
		for _, m := range pvc.Spec.AccessModes {
			modes = append(modes, string(m))
		}
		w.write(level1, "Access Modes:\t%s\n", "["+strings.Join(modes, " ")+"]")
	}
}

func describeJobObj(s *cluster.State, obj runtime.Object) string {
	j := obj.(*batchv1.Job)
	running, waiting, succeeded, failed := podPhaseCounts(s, j.Namespace, j.Spec.Selector, j.UID)
	_, _ = running, waiting
	events := eventQuery{kind: "Job", namespace: j.Namespace, name: j.Name, uids: uidsOf(j)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", j.Name)
		w.write(level0, "Namespace:\t%s\n", j.Namespace)
		w.write(level0, "Selector:\t%s\n", metav1.FormatLabelSelector(j.Spec.Selector))
		printLabelsMultiline(w, "Labels", j.Labels)
		printAnnotationsMultiline(w, "Annotations", j.Annotations)
		if p := j.Spec.Parallelism; p != nil {
			w.write(level0, "Parallelism:\t%d\n", *p)
		}
		if c := j.Spec.Completions; c != nil {
			w.write(level0, "Completions:\t%d\n", *c)
		} else {
			w.write(level0, "Completions:\t<unset>\n")
		}
		if m := j.Spec.CompletionMode; m != nil {
			w.write(level0, "Completion Mode:\t%s\n", *m)
		}
		if sus := j.Spec.Suspend; sus != nil {
			w.write(level0, "Suspend:\t%v\n", *sus)
		}
		if b := j.Spec.BackoffLimit; b != nil {
			w.write(level0, "Backoff Limit:\t%d\n", *b)
		}
		if j.Status.StartTime != nil {
			w.write(level0, "Start Time:\t%s\n", j.Status.StartTime.Time.Format(describeTimeFormat))
		}
		if j.Status.CompletionTime != nil {
			w.write(level0, "Completed At:\t%s\n", j.Status.CompletionTime.Time.Format(describeTimeFormat))
		}
		if d := jobDuration(s, j); d != "" {
			w.write(level0, "Duration:\t%s\n", d)
		}
		ready := int32(0)
		if j.Status.Ready != nil {
			ready = *j.Status.Ready
		}
		w.write(level0, "Pods Statuses:\t%d Active (%d Ready) / %d Succeeded / %d Failed\n", j.Status.Active, ready, succeeded, failed)
		describePodTemplate(&j.Spec.Template, w)
		describeEvents(s, events, w)
	})
}
