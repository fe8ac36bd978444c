package controller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/fargate"
)

// newState is a us-west-2 cluster with one profile taking namespace apps,
// on the private subnet of us-west-2b.
func newState(t *testing.T) *cluster.State {
	t.Helper()
	s := cluster.New("1.33", 7)
	s.Info.Name, s.Info.Region, s.Info.VPCCIDR = "c", "us-west-2", "10.42.0.0/16"
	s.Info.Zones = []string{"us-west-2a", "us-west-2b"}
	p := &cluster.FargateProfile{Selectors: []cluster.FargateSelector{{Namespace: "apps"}},
		Subnets: []string{aws.SubnetID("c", "us-west-2b")}, Status: cluster.FargateProfileActive}
	p.Name = "apps"
	s.FargateProfiles = map[string]*cluster.FargateProfile{p.Name: p}
	return s
}

// addPod stores a pod as the webhook leaves it: fargate-scheduler and,
// when profile is set, the profile label.
func addPod(s *cluster.State, namespace, name, profile string, mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(s.Now), Labels: map[string]string{}},
		Spec: corev1.PodSpec{SchedulerName: fargate.SchedulerName, Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	if profile != "" {
		p.Labels[fargate.LabelProfile] = profile
	}
	if mutate != nil {
		mutate(p)
	}
	s.Pods[cluster.Key(namespace, name)] = p
	return p
}

func sync(t *testing.T, s *cluster.State) bool {
	t.Helper()
	changed, err := New().Sync(s)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return changed
}

func requests(cpu, memory string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	}
}

// The first Sync judges a pod: a pod Fargate can run is sized and told
// about logging; one it cannot run gets FailedScheduling and
// PodScheduled=False. Either way a second Sync changes nothing.
func TestJudgeOnce(t *testing.T) {
	privileged := func(p *corev1.Pod) {
		yes := true
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes}
	}
	tests := []struct {
		name      string
		namespace string
		profile   string
		mutate    func(*corev1.Pod)
		logging   bool // an aws-observability/aws-logging ConfigMap exists
		// wantSize is the CapacityProvisioned annotation; "" means rejected.
		wantSize  string
		wantEvent string // reason and message of the one event
	}{
		{name: "no requests", namespace: "apps", profile: "apps", wantSize: "0.25vCPU 0.5GB",
			wantEvent: `LoggingDisabled Disabled logging because aws-logging configmap was not found. configmap "aws-logging" not found`},
		{name: "256 MiB more than asked", namespace: "apps", profile: "apps", mutate: requests("250m", "512Mi"), wantSize: "0.25vCPU 1GB",
			wantEvent: "LoggingDisabled Disabled logging"},
		{name: "next vCPU row", namespace: "apps", profile: "apps", mutate: requests("1", "8Gi"), wantSize: "2vCPU 9GB",
			wantEvent: "LoggingDisabled Disabled logging"},
		{name: "logging configured", namespace: "apps", profile: "apps", logging: true, wantSize: "0.25vCPU 0.5GB",
			wantEvent: "LoggingEnabled Successfully enabled logging for pod"},
		{name: "label chosen by the controller when missing", namespace: "apps", wantSize: "0.25vCPU 0.5GB",
			wantEvent: "LoggingDisabled Disabled logging"},
		{name: "privileged", namespace: "apps", profile: "apps", mutate: privileged,
			wantEvent: "FailedScheduling Pod not supported on Fargate: invalid SecurityContext fields: Privileged"},
		{name: "too large", namespace: "apps", profile: "apps", mutate: requests("16", "120Gi"),
			wantEvent: "FailedScheduling Pod not supported on Fargate: requests of 16 vCPU and 122880 MiB (plus 256 MiB for Kubernetes components) exceed the largest Fargate configuration, 16vCPU 120GB"},
		{name: "no profile takes it", namespace: "other",
			wantEvent: "FailedScheduling no Fargate profile selects pod other/p (namespace and labels)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newState(t)
			if tt.logging {
				s.ConfigMaps[cluster.Key(fargate.LoggingNamespace, fargate.LoggingConfigMap)] = &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fargate.LoggingConfigMap, Namespace: fargate.LoggingNamespace}}
			}
			p := addPod(s, tt.namespace, "p", tt.profile, tt.mutate)
			if !sync(t, s) {
				t.Fatal("first Sync changed nothing")
			}
			if sync(t, s) {
				t.Error("second Sync changed something: a pod is judged once")
			}
			events := s.EventsFor("Pod", tt.namespace, "p")
			if len(events) != 1 || events[0].Count != 1 {
				t.Fatalf("events = %v, want one, once", events)
			}
			if got := events[0].Reason + " " + events[0].Message; !strings.HasPrefix(got, tt.wantEvent) {
				t.Errorf("event = %q, want %q...", got, tt.wantEvent)
			}
			if events[0].Source.Component != fargate.SchedulerName {
				t.Errorf("event from %q, want %q", events[0].Source.Component, fargate.SchedulerName)
			}
			rec := s.Fargate.Pods[p.UID]
			if got := p.Annotations[fargate.AnnotationCapacityProvisioned]; got != tt.wantSize {
				t.Errorf("CapacityProvisioned = %q, want %q", got, tt.wantSize)
			}
			var cond *corev1.PodCondition
			for i := range p.Status.Conditions {
				if p.Status.Conditions[i].Type == corev1.PodScheduled {
					cond = &p.Status.Conditions[i]
				}
			}
			if tt.wantSize == "" {
				if !rec.Rejected {
					t.Error("not recorded as rejected")
				}
				if cond == nil || cond.Status != corev1.ConditionFalse || cond.Reason != corev1.PodReasonUnschedulable ||
					cond.Message != events[0].Message {
					t.Errorf("PodScheduled = %+v, want False/Unschedulable with the event's message", cond)
				}
				return
			}
			if rec.Rejected || cond != nil {
				t.Errorf("accepted pod: rejected=%v, PodScheduled=%+v", rec.Rejected, cond)
			}
			if rec.Profile != "apps" || rec.Zone != "us-west-2b" || !rec.ReadyAt.Equal(s.Now.Add(BootDelay)) {
				t.Errorf("record = %+v, want profile apps, zone us-west-2b, ready after %v", rec, BootDelay)
			}
		})
	}
}

// A pod's node registers BootDelay after the pod arrived, sized to the pod
// and marked as Fargate, and goes NodeLinger after the pod is gone.
func TestNodeLifecycle(t *testing.T) {
	s := newState(t)
	start := s.Now
	p := addPod(s, "apps", "web", "apps", requests("500m", "1Gi"))
	at := func(d time.Duration) { s.Now = start.Add(d); sync(t, s) }

	steps := []struct {
		at       time.Duration
		gone     bool // delete the pod before this step
		wantNode bool
	}{
		{at: 0, wantNode: false},
		{at: BootDelay - time.Second, wantNode: false},
		{at: BootDelay, wantNode: true},
		{at: time.Minute, gone: true, wantNode: true},
		{at: time.Minute + NodeLinger - time.Second, wantNode: true},
		{at: time.Minute + NodeLinger, wantNode: false},
	}
	var name string
	for _, st := range steps {
		if st.gone {
			s.DeletePod(p)
		}
		at(st.at)
		if rec := s.Fargate.Pods[p.UID]; rec != nil && rec.Node != "" {
			name = rec.Node
		}
		_, exists := s.Nodes[name]
		if name == "" {
			exists = false
		}
		if exists != st.wantNode {
			t.Fatalf("at %v: node exists = %v, want %v", st.at, exists, st.wantNode)
		}
	}
	if _, ok := s.Fargate.Pods[p.UID]; ok {
		t.Error("the record of a gone pod whose node went is kept")
	}
}

// The registered node: its name is the pod's address, and it carries
// Fargate's labels, taint and the pod's size with room for one pod.
func TestRegisteredNode(t *testing.T) {
	s := newState(t)
	p := addPod(s, "apps", "web", "apps", requests("500m", "1Gi"))
	sync(t, s)
	s.Now = s.Now.Add(BootDelay)
	sync(t, s)
	rec := s.Fargate.Pods[p.UID]
	node := s.Nodes[rec.Node]
	if node == nil {
		t.Fatalf("no node %q", rec.Node)
	}
	if want := "fargate-ip-" + strings.ReplaceAll(rec.IP, ".", "-") + ".us-west-2.compute.internal"; node.Name != want {
		t.Errorf("node name = %q, want %q", node.Name, want)
	}
	for k, v := range map[string]string{
		fargate.LabelComputeType:                 "fargate",
		corev1.LabelTopologyZone:                 "us-west-2b",
		corev1.LabelTopologyRegion:               "us-west-2",
		corev1.LabelHostname:                     strings.TrimPrefix(node.Name, "fargate-"),
		"failure-domain.beta.kubernetes.io/zone": "us-west-2b",
	} {
		if node.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, node.Labels[k], v)
		}
	}
	if len(node.Spec.Taints) != 1 || node.Spec.Taints[0] != fargate.Taint {
		t.Errorf("taints = %v, want %v", node.Spec.Taints, fargate.Taint)
	}
	// 500m and 1 GiB + 256 MiB: 0.5vCPU 2GB.
	for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: "500m", corev1.ResourceMemory: "2Gi", corev1.ResourcePods: "1"} {
		if q := node.Status.Allocatable[name]; q.String() != want {
			t.Errorf("allocatable %s = %s, want %s", name, q.String(), want)
		}
	}
	if p.Spec.NodeName != "" {
		t.Error("the controller bound the pod; binding is fargate-scheduler's")
	}
}
