package statefulset

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/sim"
)

func newSet(n int32, mutate func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	labels := map[string]string{"app": "db"}
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &n,
			ServiceName: "db",
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "db:1"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}},
			}},
		},
	}
	if mutate != nil {
		mutate(set)
	}
	return set
}

func ctrls() []sim.Controller {
	return []sim.Controller{New(), controllertest.Binder{}, controllertest.ClaimBinder{}, kubelet.New()}
}

func setup(t *testing.T, set *appsv1.StatefulSet) *cluster.State {
	t.Helper()
	s := controllertest.NewState()
	controllertest.AddNode(s, "n1", "8", "16Gi", nil)
	if err := admission.Create(s, set); err != nil {
		t.Fatal(err)
	}
	return s
}

func settle(t *testing.T, s *cluster.State) {
	t.Helper()
	if err := sim.Settle(s, ctrls(), time.Hour); err != nil {
		t.Fatal(err)
	}
}

func podNames(s *cluster.State) []string {
	var out []string
	for _, k := range cluster.SortedKeys(s.Pods) {
		out = append(out, s.Pods[k].Name)
	}
	return out
}

// livePodNames leaves out the pods being deleted (Terminating).
func livePodNames(s *cluster.State) []string {
	var out []string
	for _, k := range cluster.SortedKeys(s.Pods) {
		if s.Pods[k].DeletionTimestamp == nil {
			out = append(out, s.Pods[k].Name)
		}
	}
	return out
}

func messages(s *cluster.State) []string {
	var out []string
	for _, e := range s.EventsFor("StatefulSet", "default", "db") {
		out = append(out, e.Reason+" "+e.Message)
	}
	return out
}

func TestOrderedReadyCreatesOneAtATime(t *testing.T) {
	s := setup(t, newSet(3, nil))
	// One controller pass creates only db-0 (nothing is Ready yet).
	if _, err := New().Sync(s); err != nil {
		t.Fatal(err)
	}
	if got := podNames(s); !reflect.DeepEqual(got, []string{"db-0"}) {
		t.Fatalf("after one pass: %v", got)
	}
	settle(t, s)
	if got := podNames(s); !reflect.DeepEqual(got, []string{"db-0", "db-1", "db-2"}) {
		t.Fatalf("pods %v", got)
	}
	want := []string{
		"SuccessfulCreate create Claim data-db-0 Pod db-0 in StatefulSet db success",
		"SuccessfulCreate create Pod db-0 in StatefulSet db successful",
		"SuccessfulCreate create Claim data-db-1 Pod db-1 in StatefulSet db success",
		"SuccessfulCreate create Pod db-1 in StatefulSet db successful",
		"SuccessfulCreate create Claim data-db-2 Pod db-2 in StatefulSet db success",
		"SuccessfulCreate create Pod db-2 in StatefulSet db successful",
	}
	if got := messages(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n%v\nwant\n%v", got, want)
	}
	// db-1 was created only once db-0 was Ready.
	p0, p1 := s.Pods["default/db-0"], s.Pods["default/db-1"]
	if !p1.CreationTimestamp.After(p0.CreationTimestamp.Time) {
		t.Error("db-1 was not created after db-0 became ready")
	}
	set := s.StatefulSets["default/db"]
	rev := RevisionName(set)
	if p1.Labels[PodNameLabel] != "db-1" || p1.Labels[PodIndexLabel] != "1" || p1.Labels[RevisionHashLabel] != rev ||
		p1.Spec.Hostname != "db-1" || p1.Spec.Subdomain != "db" {
		t.Errorf("identity %v hostname %q subdomain %q", p1.Labels, p1.Spec.Hostname, p1.Spec.Subdomain)
	}
	vol := p1.Spec.Volumes[0]
	if vol.Name != "data" || vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != "data-db-1" {
		t.Errorf("volume %+v", vol)
	}
	pvc := s.PersistentVolumeClaims["default/data-db-1"]
	if pvc == nil || pvc.Labels["app"] != "db" || len(pvc.OwnerReferences) != 0 {
		t.Fatalf("claim %+v", pvc)
	}
	st := set.Status
	if st.Replicas != 3 || st.ReadyReplicas != 3 || st.AvailableReplicas != 3 || st.CurrentReplicas != 3 || st.UpdatedReplicas != 3 ||
		st.CurrentRevision != rev || st.UpdateRevision != rev || st.ObservedGeneration != 1 {
		t.Errorf("status %+v", st)
	}
}

func TestParallelCreatesAll(t *testing.T) {
	s := setup(t, newSet(3, func(set *appsv1.StatefulSet) { set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement }))
	if _, err := New().Sync(s); err != nil {
		t.Fatal(err)
	}
	if got := podNames(s); len(got) != 3 {
		t.Fatalf("after one pass: %v", got)
	}
}

func TestScaleDown(t *testing.T) {
	cases := []struct {
		name      string
		policy    appsv1.PersistentVolumeClaimRetentionPolicyType
		wantPVCs  int
		wantFirst []string
	}{
		{name: "retain", policy: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, wantPVCs: 3, wantFirst: []string{"db-0", "db-1"}},
		{name: "delete on scale", policy: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, wantPVCs: 1, wantFirst: []string{"db-0", "db-1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := setup(t, newSet(3, func(set *appsv1.StatefulSet) {
				set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenScaled: c.policy}
			}))
			settle(t, s)
			set := s.StatefulSets["default/db"]
			set.Spec.Replicas = ptr(int32(1))
			if _, err := New().Sync(s); err != nil {
				t.Fatal(err)
			}
			if got := livePodNames(s); !reflect.DeepEqual(got, c.wantFirst) {
				t.Fatalf("after one pass %v, want %v (highest ordinal first)", got, c.wantFirst)
			}
			// db-2 is Terminating; nothing else moves before it is gone.
			if _, err := New().Sync(s); err != nil {
				t.Fatal(err)
			}
			if got := podNames(s); !reflect.DeepEqual(got, []string{"db-0", "db-1", "db-2"}) {
				t.Fatalf("after a second pass %v: db-1 went before db-2 was gone", got)
			}
			if got := livePodNames(s); !reflect.DeepEqual(got, c.wantFirst) {
				t.Fatalf("after a second pass %v live, want %v", got, c.wantFirst)
			}
			settle(t, s)
			if got := podNames(s); !reflect.DeepEqual(got, []string{"db-0"}) {
				t.Fatalf("pods %v", got)
			}
			if len(s.PersistentVolumeClaims) != c.wantPVCs {
				t.Errorf("%d claims left, want %d", len(s.PersistentVolumeClaims), c.wantPVCs)
			}
			// Scaling back up reuses the retained claims.
			set.Spec.Replicas = ptr(int32(3))
			settle(t, s)
			if len(s.PersistentVolumeClaims) != 3 || len(s.Pods) != 3 {
				t.Errorf("after scale-up: %d claims, %d pods", len(s.PersistentVolumeClaims), len(s.Pods))
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestDeletedSetKeepsOrDeletesClaims(t *testing.T) {
	for _, policy := range []appsv1.PersistentVolumeClaimRetentionPolicyType{appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType} {
		s := setup(t, newSet(2, func(set *appsv1.StatefulSet) {
			set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: policy}
		}))
		settle(t, s)
		pvc := s.PersistentVolumeClaims["default/data-db-0"]
		if owned := len(pvc.OwnerReferences) == 1; owned != (policy == appsv1.DeletePersistentVolumeClaimRetentionPolicyType) {
			t.Errorf("%s: owner refs %+v", policy, pvc.OwnerReferences)
		}
		delete(s.StatefulSets, "default/db")
		settle(t, s)
		want := 2
		if policy == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
			want = 0
		}
		if len(s.PersistentVolumeClaims) != want {
			t.Errorf("%s: %d claims left, want %d", policy, len(s.PersistentVolumeClaims), want)
		}
	}
}

func update(t *testing.T, s *cluster.State, mutate func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	t.Helper()
	set := s.StatefulSets["default/db"].DeepCopy()
	mutate(set)
	if _, err := admission.Update(s, set); err != nil {
		t.Fatal(err)
	}
	return s.StatefulSets["default/db"]
}

func TestRollingUpdate(t *testing.T) {
	cases := []struct {
		name      string
		partition int32
		onDelete  bool
		// wantNew lists, per ordinal, whether the pod ends at the new image.
		wantNew []bool
	}{
		{name: "no partition", wantNew: []bool{true, true, true}},
		{name: "partition 2", partition: 2, wantNew: []bool{false, false, true}},
		{name: "OnDelete", onDelete: true, wantNew: []bool{false, false, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := setup(t, newSet(3, func(set *appsv1.StatefulSet) {
				if c.onDelete {
					set.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
				}
			}))
			settle(t, s)
			oldRev := s.StatefulSets["default/db"].Status.CurrentRevision
			set := update(t, s, func(set *appsv1.StatefulSet) {
				set.Spec.Template.Spec.Containers[0].Image = "db:2"
				if !c.onDelete {
					set.Spec.UpdateStrategy.RollingUpdate.Partition = ptr(c.partition)
				}
			})
			if !c.onDelete {
				// The first pass replaces the highest ordinal only.
				if _, err := New().Sync(s); err != nil {
					t.Fatal(err)
				}
				if p, ok := s.Pods["default/db-2"]; ok && p.Spec.Containers[0].Image != "db:2" && p.DeletionTimestamp == nil {
					t.Fatal("db-2 was not replaced first")
				}
				if s.Pods["default/db-1"].Spec.Containers[0].Image != "db:1" {
					t.Fatal("db-1 replaced before db-2 was ready")
				}
			}
			settle(t, s)
			updated := int32(0)
			for i, wantNew := range c.wantNew {
				p := s.Pods[fmt.Sprintf("default/db-%d", i)]
				if got := p.Spec.Containers[0].Image == "db:2"; got != wantNew {
					t.Errorf("db-%d new=%v, want %v", i, got, wantNew)
				}
				if wantNew {
					updated++
				}
			}
			st := set.Status
			newRev := RevisionName(set)
			if newRev == oldRev || st.UpdateRevision != newRev || st.UpdatedReplicas != updated {
				t.Errorf("status %+v", st)
			}
			if allNew := updated == 3; allNew != (st.CurrentRevision == newRev) {
				t.Errorf("currentRevision %s after %d updated", st.CurrentRevision, updated)
			}
			if c.partition == 2 {
				// A deleted pod below the partition comes back at the current revision.
				delete(s.Pods, "default/db-0")
				settle(t, s)
				if img := s.Pods["default/db-0"].Spec.Containers[0].Image; img != "db:1" {
					t.Errorf("db-0 recreated with %s, want the current revision", img)
				}
			}
		})
	}
}
