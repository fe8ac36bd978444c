package admission

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DaemonSetTemplateGenerationAnnotation is where apps/v1 keeps a DaemonSet's
// template generation: 1 on create, one more on each template change.
const DaemonSetTemplateGenerationAnnotation = "deprecated.daemonset.template.generation"

// Job defaults (pkg/apis/batch/v1/defaults.go).
const defaultJobBackoffLimit int32 = 6

// The unprefixed Job labels the API server still writes next to the
// batch.kubernetes.io/ ones (pkg/apis/batch: LegacyJobNameLabel, LegacyControllerUidLabel).
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

// DefaultDaemonSet applies SetDefaults_DaemonSet and the template defaults:
// RollingUpdate with maxUnavailable 1 and maxSurge 0, revisionHistoryLimit 10.
func DefaultDaemonSet(ds *appsv1.DaemonSet) {
	st := &ds.Spec.UpdateStrategy
	if st.Type == "" {
		st.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if st.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			st.RollingUpdate.MaxUnavailable = ptrTo(intstr.FromInt32(1))
		}
		if st.RollingUpdate.MaxSurge == nil {
			st.RollingUpdate.MaxSurge = ptrTo(intstr.FromInt32(0))
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = ptrTo(defaultRevisionHistoryLimit)
	}
	if _, ok := ds.Annotations[DaemonSetTemplateGenerationAnnotation]; !ok {
		if ds.Annotations == nil {
			ds.Annotations = map[string]string{}
		}
		ds.Annotations[DaemonSetTemplateGenerationAnnotation] = "1"
	}
	DefaultPodSpec(&ds.Spec.Template.Spec)
}

// DefaultStatefulSet applies SetDefaults_StatefulSet and the template and
// claim-template defaults: OrderedReady, RollingUpdate with partition 0,
// replicas 1, revisionHistoryLimit 10, claim retention Retain/Retain.
// (maxUnavailable is left unset: MaxUnavailableStatefulSet is not modelled.)
func DefaultStatefulSet(sts *appsv1.StatefulSet) {
	if sts.Spec.PodManagementPolicy == "" {
		sts.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	st := &sts.Spec.UpdateStrategy
	if st.Type == "" {
		st.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if st.Type == appsv1.RollingUpdateStatefulSetStrategyType && st.RollingUpdate != nil && st.RollingUpdate.Partition == nil {
		st.RollingUpdate.Partition = ptrTo(int32(0))
	}
	p := sts.Spec.PersistentVolumeClaimRetentionPolicy
	if p == nil {
		p = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
		sts.Spec.PersistentVolumeClaimRetentionPolicy = p
	}
	if p.WhenDeleted == "" {
		p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p.WhenScaled == "" {
		p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if sts.Spec.Replicas == nil {
		sts.Spec.Replicas = ptrTo(int32(1))
	}
	if sts.Spec.RevisionHistoryLimit == nil {
		sts.Spec.RevisionHistoryLimit = ptrTo(defaultRevisionHistoryLimit)
	}
	for i := range sts.Spec.VolumeClaimTemplates {
		DefaultClaimTemplate(&sts.Spec.VolumeClaimTemplates[i])
	}
	DefaultPodSpec(&sts.Spec.Template.Spec)
}

// DefaultClaimTemplate applies SetDefaults_PersistentVolumeClaim to an
// embedded claim template: volumeMode Filesystem and phase Pending.
func DefaultClaimTemplate(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Spec.VolumeMode == nil {
		pvc.Spec.VolumeMode = ptrTo(corev1.PersistentVolumeFilesystem)
	}
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
}

// DefaultJob applies SetDefaults_Job and the template defaults:
// completions and parallelism 1 when both are unset, backoffLimit 6,
// completionMode NonIndexed, suspend false, podReplacementPolicy
// TerminatingOrFailed, and the Job's labels from its template when it has none.
func DefaultJob(job *batchv1.Job) {
	spec := &job.Spec
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptrTo(int32(1))
		spec.Parallelism = ptrTo(int32(1))
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptrTo(int32(1))
	}
	if spec.BackoffLimit == nil {
		spec.BackoffLimit = ptrTo(defaultJobBackoffLimit)
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptrTo(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptrTo(false)
	}
	if spec.PodReplacementPolicy == nil {
		policy := batchv1.TerminatingOrFailed
		if spec.PodFailurePolicy != nil {
			policy = batchv1.Failed
		}
		spec.PodReplacementPolicy = &policy
	}
	if len(job.Labels) == 0 && len(spec.Template.Labels) > 0 {
		job.Labels = copyLabels(spec.Template.Labels)
	}
	DefaultPodSpec(&spec.Template.Spec)
}

// GenerateJobSelector is the Job strategy's generateSelector, run once the
// uid is known: unless manualSelector is set, the template gets the job-name
// and controller-uid labels (legacy and batch.kubernetes.io/ spellings) and
// the selector matches batch.kubernetes.io/controller-uid. The labels are then
// copied to the Job itself when it has none, as defaulting on read does.
func GenerateJobSelector(job *batchv1.Job) {
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		return
	}
	t := &job.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for _, k := range []string{legacyJobNameLabel, batchv1.JobNameLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = job.Name
		}
	}
	for _, k := range []string{legacyControllerUIDLabel, batchv1.ControllerUidLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = string(job.UID)
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(job.UID)
	}
	if len(job.Labels) == 0 {
		job.Labels = copyLabels(t.Labels)
	}
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// carryWorkloadStatus keeps the server-owned parts of a DaemonSet,
// StatefulSet or Job across an update (status; for a Job also the generated
// selector and template labels, which kubectl's merge would keep) and
// reports whether the spec changed (a new generation).
func carryWorkloadStatus(obj, old runtime.Object) bool {
	switch o := obj.(type) {
	case *appsv1.DaemonSet:
		od := old.(*appsv1.DaemonSet)
		o.Status = od.Status
		gen, _ := strconv.ParseInt(od.Annotations[DaemonSetTemplateGenerationAnnotation], 10, 64)
		if !apiequality.Semantic.DeepEqual(o.Spec.Template, od.Spec.Template) {
			gen++
		}
		o.Annotations[DaemonSetTemplateGenerationAnnotation] = strconv.FormatInt(gen, 10)
		return !apiequality.Semantic.DeepEqual(o.Spec, od.Spec)
	case *appsv1.StatefulSet:
		od := old.(*appsv1.StatefulSet)
		o.Status = od.Status
		return !apiequality.Semantic.DeepEqual(o.Spec, od.Spec)
	case *batchv1.Job:
		od := old.(*batchv1.Job)
		o.Status = od.Status
		if o.Spec.Selector == nil && (o.Spec.ManualSelector == nil || !*o.Spec.ManualSelector) {
			o.Spec.Selector = od.Spec.Selector.DeepCopy()
			for k, v := range od.Spec.Template.Labels {
				if _, ok := o.Spec.Template.Labels[k]; !ok {
					if o.Spec.Template.Labels == nil {
						o.Spec.Template.Labels = map[string]string{}
					}
					o.Spec.Template.Labels[k] = v
				}
			}
			if len(o.Labels) == 0 {
				o.Labels = copyLabels(od.Labels)
			}
		}
		return !apiequality.Semantic.DeepEqual(o.Spec, od.Spec)
	}
	return false
}
