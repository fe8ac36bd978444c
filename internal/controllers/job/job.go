// Package job is the Job controller (pkg/controller/job), for NonIndexed
// jobs: keep min(parallelism, remaining completions) pods active, count
// succeeded and failed pods, and mark the Job Complete (or Failed past its
// backoffLimit). It also stands in for the workload itself: berth cannot
// know how long a container runs, so a Job pod succeeds RunDuration of
// virtual time after its containers started.
package job

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// Name is the controller's name and its events' source component.
const Name = "job-controller"

// RunDuration is how long a Job pod's containers run before they exit 0.
const RunDuration = 10 * time.Second

// Event reasons and condition texts (job_controller.go, apis/batch).
const (
	SuccessfulCreateReason   = "SuccessfulCreate"
	SuccessfulDeleteReason   = "SuccessfulDelete"
	FailedCreateReason       = "FailedCreate"
	CompletedReason          = "Completed"
	CompletionsReachedReason = "CompletionsReached"
	CompletionsReachedMsg    = "Reached expected number of succeeded pods"
	BackoffLimitExceeded     = "BackoffLimitExceeded"
	BackoffLimitExceededMsg  = "Job has reached the specified backoff limit"
)

var source = cluster.EventSource{Component: Name}

// Controller implements sim.Controller.
type Controller struct{}

// New returns the Job controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync reconciles every unfinished Job, in key order.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	return controllerutil.SyncEach(s, s.Jobs, "Job", func(job *batchv1.Job) (bool, error) {
		if finished(job) {
			return false, nil
		}
		return syncJob(s, job)
	})
}

func finished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func syncJob(s *cluster.State, job *batchv1.Job) (bool, error) {
	selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return false, err
	}
	changed := false
	st := job.Status.DeepCopy()
	suspended := job.Spec.Suspend != nil && *job.Spec.Suspend
	if st.StartTime == nil && !suspended {
		now := metav1.NewTime(s.Now)
		st.StartTime = &now
	}
	var active []*corev1.Pod
	var succeeded, failed, ready, terminating int32
	for _, k := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[k]
		if p.Namespace != job.Namespace || !controllerutil.IsControlledBy(p, string(job.UID)) || !selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		if runToCompletion(s, p) {
			changed = true
		}
		switch p.Status.Phase {
		case corev1.PodSucceeded:
			succeeded++
		case corev1.PodFailed:
			failed++
		default:
			if p.DeletionTimestamp != nil {
				terminating++ // status.terminating (docs/node-lifecycle.md)
			}
			if p.DeletionTimestamp == nil {
				active = append(active, p)
				if controllerutil.IsPodReady(p) {
					ready++
				}
			}
		}
		if cluster.IsTerminal(p) && dropTrackingFinalizer(p) {
			p.ResourceVersion = s.Bump()
			changed = true
		}
	}
	want := wantActive(job, succeeded)
	if suspended {
		want = 0
	}
	var manageErr error
	switch {
	case backoffLimit(job) < failed:
		want = 0
		setCondition(st, batchv1.JobFailureTarget, BackoffLimitExceeded, BackoffLimitExceededMsg, s.Now)
		setCondition(st, batchv1.JobFailed, BackoffLimitExceeded, BackoffLimitExceededMsg, s.Now)
		s.Record(source, regarding(job), corev1.EventTypeWarning, BackoffLimitExceeded, BackoffLimitExceededMsg)
		fallthrough
	case int32(len(active)) > want:
		// Remove the newest extra pods (parallelism lowered, or done).
		for i := len(active) - 1; i >= 0 && int32(i) >= want; i-- {
			s.GracefulDeletePod(active[i], nil)
			s.Record(source, regarding(job), corev1.EventTypeNormal, SuccessfulDeleteReason, "Deleted pod: "+active[i].Name)
			changed = true
		}
		active = active[:min(int(want), len(active))]
	case int32(len(active)) < want:
		for n := want - int32(len(active)); n > 0; n-- {
			pod := podFromTemplate(job)
			if err := admission.CreatePod(s, pod); err != nil {
				s.Record(source, regarding(job), corev1.EventTypeWarning, FailedCreateReason, "Error creating: "+err.Error())
				manageErr = err
				break
			}
			s.Record(source, regarding(job), corev1.EventTypeNormal, SuccessfulCreateReason, "Created pod: "+pod.Name)
			active = append(active, pod)
			changed = true
		}
	}
	st.Active, st.Succeeded, st.Failed = int32(len(active)), succeeded, failed
	st.Ready = &ready
	st.Terminating = &terminating
	if st.UncountedTerminatedPods == nil {
		st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	if complete(job, succeeded, int32(len(active))) && !finishedStatus(st) {
		setCondition(st, batchv1.JobSuccessCriteriaMet, CompletionsReachedReason, CompletionsReachedMsg, s.Now)
		setCondition(st, batchv1.JobComplete, CompletionsReachedReason, CompletionsReachedMsg, s.Now)
		now := metav1.NewTime(s.Now)
		st.CompletionTime = &now
		s.Record(source, regarding(job), corev1.EventTypeNormal, CompletedReason, "Job completed")
	}
	if !apiequality.Semantic.DeepEqual(*st, job.Status) {
		job.Status = *st
		job.ResourceVersion = s.Bump()
		changed = true
	}
	return changed, manageErr
}

// wantActive is how many pods should run: parallelism, capped by the
// completions still missing; without completions, none once one succeeded.
func wantActive(job *batchv1.Job, succeeded int32) int32 {
	parallelism := int32(1)
	if job.Spec.Parallelism != nil {
		parallelism = *job.Spec.Parallelism
	}
	if job.Spec.Completions == nil {
		if succeeded > 0 {
			return 0
		}
		return parallelism
	}
	return max(0, min(parallelism, *job.Spec.Completions-succeeded))
}

func complete(job *batchv1.Job, succeeded, active int32) bool {
	if job.Spec.Completions == nil {
		return succeeded > 0 && active == 0
	}
	return succeeded >= *job.Spec.Completions
}

func finishedStatus(st *batchv1.JobStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			return true
		}
	}
	return false
}

func backoffLimit(job *batchv1.Job) int32 {
	if job.Spec.BackoffLimit == nil {
		return 6
	}
	return *job.Spec.BackoffLimit
}

func setCondition(st *batchv1.JobStatus, t batchv1.JobConditionType, reason, message string, now time.Time) {
	st.Conditions = append(st.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue,
		LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: message})
}

// podFromTemplate is the Job's pod: generateName "<job>-", the template
// (which carries the job-name and controller-uid labels), the controller
// reference and the job-tracking finalizer.
func podFromTemplate(job *batchv1.Job) *corev1.Pod {
	t := job.Spec.Template.DeepCopy()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       job.Namespace,
			GenerateName:    job.Name + "-",
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      append(t.Finalizers, batchv1.JobTrackingFinalizer),
			OwnerReferences: []metav1.OwnerReference{controllerutil.NewControllerRef(job, "batch/v1", "Job")},
		},
		Spec: t.Spec,
	}
}

func dropTrackingFinalizer(p *corev1.Pod) bool {
	for i, f := range p.Finalizers {
		if f == batchv1.JobTrackingFinalizer {
			p.Finalizers = append(p.Finalizers[:i:i], p.Finalizers[i+1:]...)
			return true
		}
	}
	return false
}

// runToCompletion ends a running Job pod RunDuration after its containers
// started, as the kubelet would report a container exiting 0, and wakes the
// controller then otherwise.
func runToCompletion(s *cluster.State, p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	var started time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
		if t := cs.State.Running.StartedAt.Time; started.IsZero() || t.After(started) {
			started = t
		}
	}
	if started.IsZero() {
		return false
	}
	done := started.Add(RunDuration)
	if s.Now.Before(done) {
		controllerutil.AddTimerOnce(s, cluster.Timer{At: done, Owner: Name, Object: cluster.Key(p.Namespace, p.Name), Settling: true})
		return false
	}
	finishedAt := metav1.NewTime(done)
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: cs.State.Running.StartedAt, FinishedAt: finishedAt, ContainerID: cs.ContainerID}}
		cs.Ready = false
		started := false
		cs.Started = &started
	}
	p.Status.Phase = corev1.PodSucceeded
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.Reason, c.Message, c.LastTransitionTime = corev1.ConditionFalse, "PodCompleted", "", finishedAt
		}
	}
	p.ResourceVersion = s.Bump()
	// A Succeeded pod leaves the scheduler's cache: a Pod/Delete.
	s.PodDeleted(p)
	return true
}

func regarding(job *batchv1.Job) corev1.ObjectReference {
	return cluster.Regarding("Job", "batch/v1", job)
}
