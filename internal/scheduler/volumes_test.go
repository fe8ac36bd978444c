package scheduler

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/controllers/volume"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
	"github.com/berth-sim/berth/internal/sim"
)

func storageClass(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	reclaim := v1.PersistentVolumeReclaimDelete
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner,
		VolumeBindingMode: &mode, ReclaimPolicy: &reclaim, Parameters: map[string]string{"type": "gp2"}}
}

func pvc(name, class string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("claim-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}}
}

func withClaim(p *v1.Pod, claim string) *v1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	return p
}

func zonedNode(name, zone string) *v1.Node {
	n := plugintest.WithLabels(plugintest.SizedNode(name, "2", "8Gi", 110), v1.LabelTopologyZone, zone, v1.LabelTopologyRegion, "eu-west-1",
		v1.LabelInstanceTypeStable, "m5.large")
	n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
	return n
}

// The verified messages S06, S07 and S08 (checked on the real scheduler), byte for byte.
func TestVolumeMessages(t *testing.T) {
	tests := []struct {
		name, version string
		setup         func(s *cluster.State)
		claim         string
		want          string
	}{
		{name: "S06", version: "1.36", claim: "missing",
			want: `0/2 nodes are available: persistentvolumeclaim "missing" not found. not found`},
		{name: "S06", version: "1.33", claim: "missing",
			want: `0/2 nodes are available: persistentvolumeclaim "missing" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.`},
		{name: "S07", version: "1.36", claim: "c", setup: func(s *cluster.State) {
			s.StorageClasses["fast"] = storageClass("fast", "ebs.csi.aws.com", storagev1.VolumeBindingImmediate)
			s.PersistentVolumeClaims["default/c"] = pvc("c", "fast")
		}, want: `0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found`},
		{name: "S07", version: "1.33", claim: "c", setup: func(s *cluster.State) {
			s.StorageClasses["fast"] = storageClass("fast", "ebs.csi.aws.com", storagev1.VolumeBindingImmediate)
			s.PersistentVolumeClaims["default/c"] = pvc("c", "fast")
		}, want: `0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.`},
		{name: "S08", version: "1.36", claim: "c", setup: func(s *cluster.State) {
			s.StorageClasses["local"] = storageClass("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer)
			s.PersistentVolumeClaims["default/c"] = pvc("c", "local")
		}, want: `0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.`},
		{name: "S08", version: "1.33", claim: "c", setup: func(s *cluster.State) {
			s.StorageClasses["local"] = storageClass("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer)
			s.PersistentVolumeClaims["default/c"] = pvc("c", "local")
		}, want: `0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.`},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.version, func(t *testing.T) {
			pod := withClaim(plugintest.SizedPod("p", "100m", ""), tt.claim)
			s := newState(tt.version, []*v1.Node{plugintest.SizedNode("n1", "2", "8Gi", 110), plugintest.SizedNode("n2", "2", "8Gi", 110)}, pod)
			if tt.setup != nil {
				tt.setup(s)
			}
			if _, err := New().Sync(s); err != nil {
				t.Fatal(err)
			}
			c := scheduledCondition(pod)
			if pod.Spec.NodeName != "" || c == nil || c.Message != tt.want {
				t.Fatalf("node %q condition %+v\nwant %s", pod.Spec.NodeName, c, tt.want)
			}
		})
	}
}

func volumeCluster(t *testing.T, nodes ...*v1.Node) *cluster.State {
	t.Helper()
	s := newState("1.34", nodes)
	s.DaemonSets[cluster.Key("kube-system", "ebs-csi-node")] = &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "ebs-csi-node"}}
	s.StorageClasses["gp2"] = storageClass("gp2", "kubernetes.io/aws-ebs", storagev1.VolumeBindingWaitForFirstConsumer)
	return s
}

func settleVolumes(t *testing.T, s *cluster.State) {
	t.Helper()
	if err := sim.Settle(s, []sim.Controller{New(), volume.New(), kubelet.New()}, time.Hour); err != nil {
		t.Fatal(err)
	}
}

// A StatefulSet-like pod with a WFFC gp2 claim: the scheduler picks a node,
// PreBind names it on the claim, the provisioner creates the PV in that
// node's zone, and the kubelet starts the pod once the volume is attached.
func TestWaitForFirstConsumerEndToEnd(t *testing.T) {
	s := volumeCluster(t, zonedNode("a1", "eu-west-1a"), zonedNode("b1", "eu-west-1b"))
	claim := pvc("data-web-0", "gp2")
	s.PersistentVolumeClaims["default/data-web-0"] = claim
	pod := withClaim(plugintest.SizedPod("web-0", "100m", ""), "data-web-0")
	pod.Spec.NodeSelector = map[string]string{v1.LabelTopologyZone: "eu-west-1b"}
	pod.Status.Phase = v1.PodPending
	s.Pods["default/web-0"] = pod
	settleVolumes(t, s)
	claim = s.PersistentVolumeClaims["default/data-web-0"]
	if pod.Spec.NodeName != "b1" || claim.Annotations["volume.kubernetes.io/selected-node"] != "b1" {
		t.Fatalf("pod on %q, claim annotations %v", pod.Spec.NodeName, claim.Annotations)
	}
	pv := s.PersistentVolumes[claim.Spec.VolumeName]
	if claim.Status.Phase != v1.ClaimBound || pv == nil {
		t.Fatalf("claim %s, volume %q", claim.Status.Phase, claim.Spec.VolumeName)
	}
	if pv.Labels[v1.LabelTopologyZone] != "eu-west-1b" {
		t.Errorf("volume zone %q, want eu-west-1b", pv.Labels[v1.LabelTopologyZone])
	}
	if pod.Status.Phase != v1.PodRunning {
		t.Fatalf("pod phase %s", pod.Status.Phase)
	}
	// Sandbox only after provisioning and attach.
	bound := pv.Status.LastPhaseTransitionTime.Time
	var sandbox time.Time
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReadyToStartContainers {
			sandbox = c.LastTransitionTime.Time
		}
	}
	if want := bound.Add(kubelet.VolumeAttachDelay + kubelet.SandboxDelay); !sandbox.Equal(want) {
		t.Errorf("sandbox ready at %v, want %v (bound %v)", sandbox, want, bound)
	}
	var attached bool
	for _, e := range s.EventsFor("Pod", "default", "web-0") {
		if e.Reason == "SuccessfulAttachVolume" && e.Message == `AttachVolume.Attach succeeded for volume "`+pv.Name+`" ` {
			attached = true
		}
	}
	if !attached {
		t.Error("no SuccessfulAttachVolume event")
	}

	// The pod is recreated (StatefulSet) with a node selector that only
	// allows the other zone: its PV's node affinity now rejects every node.
	delete(s.Pods, "default/web-0")
	again := withClaim(plugintest.SizedPod("web-0", "100m", ""), "data-web-0")
	again.Spec.NodeSelector = map[string]string{v1.LabelTopologyZone: "eu-west-1a"}
	again.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"eu-west-1a", "eu-west-1b"}}}}}}}}
	again.Spec.NodeSelector = nil
	s.Nodes["b1"].Spec.Unschedulable = true
	s.Pods["default/web-0"] = again
	settleVolumes(t, s)
	c := scheduledCondition(again)
	want := "0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 1 node(s) were unschedulable. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
	if again.Spec.NodeName != "" || c == nil || c.Message != want {
		t.Fatalf("node %q condition %+v\nwant %s", again.Spec.NodeName, c, want)
	}
}

// A pod whose claims are not bound stays in ContainerCreating without a sandbox.
func TestKubeletWaitsForClaims(t *testing.T) {
	s := volumeCluster(t, zonedNode("a1", "eu-west-1a"))
	s.StorageClasses["other"] = storageClass("other", "example.com/none", storagev1.VolumeBindingWaitForFirstConsumer)
	s.PersistentVolumeClaims["default/c"] = pvc("c", "other")
	pod := withClaim(plugintest.SizedPod("p", "100m", ""), "c")
	pod.Status.Phase = v1.PodPending
	s.Pods["default/p"] = pod
	settleVolumes(t, s)
	if pod.Spec.NodeName != "a1" || pod.Status.Phase != v1.PodPending || pod.Status.PodIP != "" {
		t.Fatalf("node %q phase %s ip %q", pod.Spec.NodeName, pod.Status.Phase, pod.Status.PodIP)
	}
	if w := pod.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ContainerCreating" {
		t.Fatalf("container state %+v", pod.Status.ContainerStatuses[0].State)
	}
}
