package view

import (
	"bytes"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func workloadState() *cluster.State {
	s := cluster.New("", 1)
	s.Now = s.Now.Add(time.Hour)
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:1"}}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	s.DaemonSets["kube-system/aws-node"] = &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "aws-node", Namespace: "kube-system", Generation: 1, CreationTimestamp: at(s, 5*time.Minute)},
		Spec: appsv1.DaemonSetSpec{Selector: sel, Template: *tmpl.DeepCopy(),
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 3,
			NumberAvailable: 2, ObservedGeneration: 1},
	}
	s.DaemonSets["kube-system/aws-node"].Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	s.StatefulSets["default/web"] = &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 1, CreationTimestamp: at(s, 2*time.Minute)},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), Selector: sel, Template: *tmpl.DeepCopy(),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(0))}}},
		Status: appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 1, UpdatedReplicas: 3, ObservedGeneration: 1},
	}
	start, done := at(s, 90*time.Second), at(s, 80*time.Second)
	s.Jobs["default/pi"] = &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default", Generation: 1, CreationTimestamp: at(s, 90*time.Second)},
		Spec:       batchv1.JobSpec{Completions: ptr(int32(1)), Parallelism: ptr(int32(1)), Selector: sel, Template: *tmpl.DeepCopy()},
		Status: batchv1.JobStatus{StartTime: &start, CompletionTime: &done, Succeeded: 1,
			Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}},
	}
	s.Jobs["default/batch"] = &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "batch", Namespace: "default", Generation: 1, CreationTimestamp: at(s, 30*time.Second)},
		Spec:       batchv1.JobSpec{Parallelism: ptr(int32(3)), Selector: sel, Template: *tmpl.DeepCopy()},
		Status:     batchv1.JobStatus{StartTime: &start, Active: 3},
	}
	return s
}

func TestGetWorkloads(t *testing.T) {
	tests := []struct {
		name string
		opts GetOptions
		want string
	}{
		{name: "daemonsets", opts: GetOptions{Args: []string{"ds"}, Namespace: "kube-system"},
			want: "NAME       DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR            AGE\n" +
				"aws-node   3         3         2       3            2           kubernetes.io/os=linux   5m\n"},
		{name: "daemonsets wide", opts: GetOptions{Args: []string{"daemonsets.apps"}, Namespace: "kube-system", Output: "wide"},
			want: "NAME       DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR            AGE   CONTAINERS   IMAGES   SELECTOR\n" +
				"aws-node   3         3         2       3            2           kubernetes.io/os=linux   5m    c            img:1    app=x\n"},
		{name: "statefulsets", opts: GetOptions{Args: []string{"sts"}, Output: "wide"},
			want: "NAME   READY   AGE   CONTAINERS   IMAGES\nweb    1/3     2m    c            img:1\n"},
		{name: "jobs", opts: GetOptions{Args: []string{"jobs"}},
			want: "NAME    STATUS     COMPLETIONS   DURATION   AGE\n" +
				"batch   Running    0/1 of 3      90s        30s\n" +
				"pi      Complete   1/1           10s        90s\n"},
		{name: "all", opts: GetOptions{Args: []string{"all"}, Output: "name"},
			want: "statefulset.apps/web\njob.batch/batch\njob.batch/pi\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Get(&out, workloadState(), tc.opts); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), tc.want)
			}
		})
	}
}

func TestRolloutStatusWorkloads(t *testing.T) {
	tests := []struct {
		name     string
		ref, ns  string
		mutate   func(s *cluster.State)
		want     string
		wantDone bool
		wantErr  string
	}{
		{name: "ds not available", ref: "ds/aws-node", ns: "kube-system",
			want: "Waiting for daemon set \"aws-node\" rollout to finish: 2 of 3 updated pods are available...\n"},
		{name: "ds not updated", ref: "daemonset/aws-node", ns: "kube-system",
			mutate: func(s *cluster.State) { s.DaemonSets["kube-system/aws-node"].Status.UpdatedNumberScheduled = 1 },
			want:   "Waiting for daemon set \"aws-node\" rollout to finish: 1 out of 3 new pods have been updated...\n"},
		{name: "ds spec not observed", ref: "ds/aws-node", ns: "kube-system",
			mutate: func(s *cluster.State) { s.DaemonSets["kube-system/aws-node"].Generation = 2 },
			want:   "Waiting for daemon set spec update to be observed...\n"},
		{name: "ds done", ref: "ds/aws-node", ns: "kube-system",
			mutate: func(s *cluster.State) { s.DaemonSets["kube-system/aws-node"].Status.NumberAvailable = 3 },
			want:   "daemon set \"aws-node\" successfully rolled out\n", wantDone: true},
		{name: "ds OnDelete", ref: "ds/aws-node", ns: "kube-system",
			mutate: func(s *cluster.State) {
				s.DaemonSets["kube-system/aws-node"].Spec.UpdateStrategy.Type = appsv1.OnDeleteDaemonSetStrategyType
			},
			wantErr: "error: rollout status is only available for RollingUpdate strategy type"},
		{name: "sts not ready", ref: "sts/web", ns: "default", want: "Waiting for 2 pods to be ready...\n"},
		{name: "sts partitioned done", ref: "statefulset/web", ns: "default",
			mutate: func(s *cluster.State) { s.StatefulSets["default/web"].Status.ReadyReplicas = 3 },
			want:   "partitioned roll out complete: 3 new pods have been updated...\n", wantDone: true},
		{name: "sts partition waiting", ref: "sts/web", ns: "default",
			mutate: func(s *cluster.State) {
				set := s.StatefulSets["default/web"]
				set.Status.ReadyReplicas, set.Status.UpdatedReplicas = 3, 0
				set.Spec.UpdateStrategy.RollingUpdate.Partition = ptr(int32(1))
			},
			want: "Waiting for partitioned roll out to finish: 0 out of 2 new pods have been updated...\n"},
		{name: "sts rolling without rollingUpdate", ref: "sts/web", ns: "default",
			mutate: func(s *cluster.State) {
				set := s.StatefulSets["default/web"]
				set.Status.ReadyReplicas, set.Spec.UpdateStrategy.RollingUpdate = 3, nil
				set.Status.CurrentRevision, set.Status.UpdateRevision = "web-a", "web-b"
			},
			want: "waiting for statefulset rolling update to complete 3 pods at revision web-b...\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := workloadState()
			if tc.mutate != nil {
				tc.mutate(s)
			}
			var out bytes.Buffer
			done, err := RolloutStatus(&out, s, tc.ref, tc.ns, false, 0)
			if errString(err) != tc.wantErr || done != tc.wantDone || out.String() != tc.want {
				t.Errorf("got %q, %v, %v", out.String(), done, err)
			}
		})
	}
}

func TestDescribeWorkloads(t *testing.T) {
	tests := []struct {
		kind, ns, name string
		want           []string
	}{
		{"ds", "kube-system", "aws-node", []string{
			"Name:           aws-node\nNamespace:      kube-system\nSelector:       app=x\nNode-Selector:  kubernetes.io/os=linux\n",
			"Desired Number of Nodes Scheduled: 3\nCurrent Number of Nodes Scheduled: 3\nNumber of Nodes Scheduled with Up-to-date Pods: 3\nNumber of Nodes Scheduled with Available Pods: 2\nNumber of Nodes Misscheduled: 0\n",
			"Pods Status:  0 Running / 0 Waiting / 0 Succeeded / 0 Failed\nPod Template:\n",
		}},
		{"sts", "default", "web", []string{
			"Replicas:           3 desired | 3 total\nUpdate Strategy:    RollingUpdate\n  Partition:        0\n",
			"Volume Claims:     <none>\nEvents:            <none>\n",
		}},
		{"job", "default", "pi", []string{
			"Parallelism:    1\nCompletions:    1\n",
			"Duration:       10s\nPods Statuses:  0 Active (0 Ready) / 0 Succeeded / 0 Failed\n",
		}},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		if err := Describe(&out, workloadState(), tc.kind, tc.ns, []string{tc.name}, ""); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("describe %s: missing\n%s\nin\n%s", tc.kind, w, out.String())
			}
		}
	}
}
