package view

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func storageState() *cluster.State {
	s := cluster.New("1.34", 1)
	created := metav1.NewTime(cluster.Epoch)
	s.Now = cluster.Epoch.Add(5 * time.Minute)
	wffc, del := storagev1.VolumeBindingWaitForFirstConsumer, corev1.PersistentVolumeReclaimDelete
	fs := corev1.PersistentVolumeFilesystem
	s.StorageClasses["gp2"] = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp2", CreationTimestamp: created,
		Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "kubernetes.io/aws-ebs", ReclaimPolicy: &del, VolumeBindingMode: &wffc}
	class := "gp2"
	s.PersistentVolumeClaims["default/data-web-0"] = &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-web-0", Namespace: "default", CreationTimestamp: created},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: "pvc-1234", VolumeMode: &fs,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
	}
	s.PersistentVolumeClaims["default/data-web-1"] = &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-web-1", Namespace: "default", CreationTimestamp: created},
		Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeMode: &fs},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	s.PersistentVolumes["pvc-1234"] = &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-1234", CreationTimestamp: created},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadWriteMany},
			PersistentVolumeReclaimPolicy: del, StorageClassName: "gp2", VolumeMode: &fs,
			ClaimRef: &corev1.ObjectReference{Namespace: "default", Name: "data-web-0"}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	return s
}

func TestGetStorage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"sc"}, "NAME            PROVISIONER             RECLAIMPOLICY   VOLUMEBINDINGMODE      ALLOWVOLUMEEXPANSION   AGE\n" +
			"gp2 (default)   kubernetes.io/aws-ebs   Delete          WaitForFirstConsumer   false                  5m\n"},
		{[]string{"pvc"}, "NAME         STATUS    VOLUME     CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE\n" +
			"data-web-0   Bound     pvc-1234   10Gi       RWO            gp2            <unset>                 5m\n" +
			"data-web-1   Pending                                        gp2            <unset>                 5m\n"},
		{[]string{"pv"}, "NAME       CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS   CLAIM                STORAGECLASS   VOLUMEATTRIBUTESCLASS   REASON   AGE\n" +
			"pvc-1234   10Gi       RWO,RWX        Delete           Bound    default/data-web-0   gp2            <unset>                          5m\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if err := Get(&out, storageState(), GetOptions{Args: tt.args}); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if out.String() != tt.want {
			t.Errorf("%v:\ngot:\n%s\nwant:\n%s", tt.args, out.String(), tt.want)
		}
	}
}
