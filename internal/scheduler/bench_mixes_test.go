package scheduler

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
	"github.com/berth-sim/berth/internal/sim"
)

// volumeState is benchState with every pending pod owning a 10Gi claim of a
// WaitForFirstConsumer EBS class (as StatefulSet pods do), and every node an
// EBS CSINode with an attach limit of 25.
func volumeState() *cluster.State {
	s := benchState(plainPod)
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	s.StorageClasses["gp3"] = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3"},
		Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &mode}
	limit := int32(25)
	for name := range s.Nodes {
		s.CSINodes[name] = &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "ebs.csi.aws.com", NodeID: name,
				Allocatable: &storagev1.VolumeNodeResources{Count: &limit}}}}}
	}
	class := "gp3"
	for _, p := range s.Pods {
		claim := "data-" + p.Name
		s.PersistentVolumeClaims[cluster.Key(p.Namespace, claim)] = &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: p.Namespace, UID: types.UID("claim-" + p.Name)},
			Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: &class,
				Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")}}},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}}
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "data",
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	}
	return s
}

// preemptionState fills every node with two bound 1850m pods of priority 0;
// of the pending pods, every tenth asks 1 CPU at priority 1000 and must
// preempt, the others are plain 100m pods that fit in what is left.
func preemptionState() *cluster.State {
	s := benchState(func(i int) *v1.Pod {
		if i%10 == 0 {
			p := plugintest.SizedPod(fmt.Sprintf("urgent-%05d", i), "1", "1Gi")
			prio := int32(1000)
			p.Spec.Priority = &prio
			return p
		}
		return plainPod(i)
	})
	zero := int32(0)
	for i, name := range s.Scheduler.NodeOrder {
		for j := 0; j < 2; j++ {
			p := plugintest.SizedPod(fmt.Sprintf("filler-%04d-%d", i, j), "1850m", "1Gi")
			p.UID = types.UID(p.Name)
			p.Spec.Priority = &zero
			p.Spec.NodeName = name
			p.Status.Phase = v1.PodRunning
			s.Pods[cluster.Key(p.Namespace, p.Name)] = p
		}
	}
	return s
}

// BenchmarkScheduleMixes measures the volume-heavy and preemption mixes. The
// preemption run goes through sim.Settle, because a preemptor binds on its
// retry after the victims are gone (one second of virtual backoff later).
func BenchmarkScheduleMixes(b *testing.B) {
	for _, bc := range []struct {
		name    string
		state   func() *cluster.State
		pending int
	}{{"volumes", volumeState, benchPods}, {"preemption", preemptionState, benchPods}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s := bc.state()
				sc := New()
				b.StartTimer()
				if err := sim.Settle(s, []sim.Controller{sc}, time.Hour); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				bound := 0
				for _, p := range s.Pods {
					if p.Spec.NodeName != "" && p.Name[:6] != "filler" {
						bound++
					}
				}
				if bound != bc.pending {
					b.Fatalf("bound %d of %d pending pods", bound, bc.pending)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(bc.pending)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
		})
	}
}
