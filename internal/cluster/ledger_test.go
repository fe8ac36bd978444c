package cluster

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DeleteNode keeps the node's life in the ledger, through a save and a
// load; deleting it again adds nothing.
func TestDeleteNodeRecordsLife(t *testing.T) {
	s := New("", 1)
	s.Nodes["fargate-ip-1"] = &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "fargate-ip-1", CreationTimestamp: metav1.NewTime(Epoch.Add(time.Minute)),
			Labels: map[string]string{"eks.amazonaws.com/compute-type": "fargate"}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-west-2b/x/fargate-ip-1"},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("1Gi"),
			corev1.ResourcePods: resource.MustParse("1")}},
	}
	s.Fargate.Pods = map[types.UID]*FargatePod{"u": {Pod: "ns/p", Profile: "fp", Node: "fargate-ip-1"}}
	s.Now = Epoch.Add(2 * time.Hour)
	s.DeleteNode("fargate-ip-1")
	s.DeleteNode("fargate-ip-1")
	dir := t.TempDir()
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.NodeLedger) != 1 {
		t.Fatalf("ledger %+v: want one life", got.NodeLedger)
	}
	l := got.NodeLedger[0]
	if l.Name != "fargate-ip-1" || !l.Start.Equal(Epoch.Add(time.Minute)) || !l.End.Equal(Epoch.Add(2*time.Hour)) ||
		l.FargateProfile != "fp" || l.ProviderID == "" || l.Labels["eks.amazonaws.com/compute-type"] != "fargate" {
		t.Errorf("life %+v", l)
	}
	if _, ok := l.Capacity[corev1.ResourcePods]; ok || l.Capacity.Cpu().MilliValue() != 250 {
		t.Errorf("capacity %v: want cpu and memory only", l.Capacity)
	}
}
