package job

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/sim"
)

func ptr[T any](v T) *T { return &v }

func newJob(completions, parallelism *int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default"},
		Spec: batchv1.JobSpec{
			Completions: completions, Parallelism: parallelism,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "pi", Image: "perl:5.34"}}}},
		},
	}
}

func ctrls() []sim.Controller { return []sim.Controller{New(), controllertest.Binder{}, kubelet.New()} }

func TestJobRunsToCompletion(t *testing.T) {
	cases := []struct {
		name                     string
		completions, parallelism *int32
		wantFirst                int // pods created by the first pass
		wantSucceeded            int32
	}{
		{name: "defaults", wantFirst: 1, wantSucceeded: 1},
		{name: "completions 5 parallelism 2", completions: ptr(int32(5)), parallelism: ptr(int32(2)), wantFirst: 2, wantSucceeded: 5},
		{name: "parallelism 3, no completions", parallelism: ptr(int32(3)), wantFirst: 3, wantSucceeded: 3},
		{name: "parallelism above completions", completions: ptr(int32(2)), parallelism: ptr(int32(4)), wantFirst: 2, wantSucceeded: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := controllertest.NewState()
			controllertest.AddNode(s, "n1", "8", "16Gi", nil)
			if err := admission.Create(s, newJob(c.completions, c.parallelism)); err != nil {
				t.Fatal(err)
			}
			job := s.Jobs["default/pi"]
			uid := string(job.UID)
			if job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] != uid || job.Spec.Template.Labels["job-name"] != "pi" ||
				job.Spec.Template.Labels["controller-uid"] != uid || job.Spec.Template.Labels[batchv1.JobNameLabel] != "pi" {
				t.Fatalf("generated selector/labels: %v / %v", job.Spec.Selector, job.Spec.Template.Labels)
			}
			if _, err := New().Sync(s); err != nil {
				t.Fatal(err)
			}
			if len(s.Pods) != c.wantFirst || job.Status.Active != int32(c.wantFirst) || job.Status.StartTime == nil {
				t.Fatalf("first pass: %d pods, status %+v", len(s.Pods), job.Status)
			}
			for _, p := range s.Pods {
				if !strings.HasPrefix(p.Name, "pi-") || p.Labels[batchv1.ControllerUidLabel] != uid || p.Finalizers[0] != batchv1.JobTrackingFinalizer {
					t.Errorf("pod %s labels %v finalizers %v", p.Name, p.Labels, p.Finalizers)
				}
			}
			start := s.Now
			if err := sim.Settle(s, ctrls(), time.Hour); err != nil {
				t.Fatal(err)
			}
			st := job.Status
			if st.Succeeded != c.wantSucceeded || st.Active != 0 || st.Failed != 0 || st.CompletionTime == nil {
				t.Fatalf("status %+v", st)
			}
			if len(st.Conditions) != 2 || st.Conditions[0].Type != batchv1.JobSuccessCriteriaMet || st.Conditions[1].Type != batchv1.JobComplete ||
				st.Conditions[1].Reason != CompletionsReachedReason || st.Conditions[1].Message != CompletionsReachedMsg {
				t.Errorf("conditions %+v", st.Conditions)
			}
			if d := st.CompletionTime.Sub(start); d < RunDuration {
				t.Errorf("completed after %s, want at least %s", d, RunDuration)
			}
			for _, p := range s.Pods {
				if p.Status.Phase != corev1.PodSucceeded || len(p.Finalizers) != 0 {
					t.Errorf("pod %s phase %s finalizers %v", p.Name, p.Status.Phase, p.Finalizers)
				}
			}
			events := s.EventsFor("Job", "default", "pi")
			last := events[len(events)-1]
			if last.Reason != CompletedReason || last.Message != "Job completed" || len(events) != int(c.wantSucceeded)+1 {
				t.Errorf("%d events, last %s %q", len(events), last.Reason, last.Message)
			}
			for _, e := range events[:len(events)-1] {
				name := strings.TrimPrefix(e.Message, "Created pod: ")
				if e.Reason != SuccessfulCreateReason || s.Pods[cluster.Key("default", name)] == nil {
					t.Errorf("event %s %q", e.Reason, e.Message)
				}
			}
		})
	}
}

func TestSuspendedJobCreatesNothing(t *testing.T) {
	s := controllertest.NewState()
	j := newJob(nil, nil)
	j.Spec.Suspend = ptr(true)
	if err := admission.Create(s, j); err != nil {
		t.Fatal(err)
	}
	if _, err := New().Sync(s); err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 0 || s.Jobs["default/pi"].Status.StartTime != nil {
		t.Fatal("suspended job started")
	}
}
