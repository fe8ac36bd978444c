package provisioner

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestPodVolumesAndLimits(t *testing.T) {
	s := cluster.New("", 1)
	gp3, legacy, missing := "gp3", "legacy", "missing"
	s.StorageClasses["gp3"] = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3"}, Provisioner: "ebs.csi.aws.com"}
	s.StorageClasses["legacy"] = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}, Provisioner: "kubernetes.io/aws-ebs"}
	s.PersistentVolumes["pv-csi"] = &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-csi"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "efs.csi.aws.com"}}}}
	s.PersistentVolumes["pv-intree"] = &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-intree"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}}}
	s.PersistentVolumes["pv-nfs"] = &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-nfs"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "x", Path: "/"}}}}
	claim := func(name string, class *string, volume string) {
		s.PersistentVolumeClaims[cluster.Key("default", name)] = &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class, VolumeName: volume}}
	}
	claim("unbound", &gp3, "")
	claim("unbound-legacy", &legacy, "")
	claim("no-class", nil, "")
	claim("gone-class", &missing, "")
	claim("csi", nil, "pv-csi")
	claim("intree", nil, "pv-intree")
	claim("nfs", nil, "pv-nfs")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}
	for _, name := range []string{"unbound", "unbound-legacy", "no-class", "gone-class", "csi", "intree", "nfs", "absent"} {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	got := fmt.Sprint(podVolumes(s, pod))
	want := "map[ebs.csi.aws.com:map[default/intree:true default/unbound:true default/unbound-legacy:true] efs.csi.aws.com:map[default/csi:true]]"
	if got != want {
		t.Errorf("podVolumes = %s\nwant %s", got, want)
	}

	two := int32(2)
	s.CSINodes["n1"] = &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: "ebs.csi.aws.com", Allocatable: &storagev1.VolumeNodeResources{Count: &two}},
		{Name: "efs.csi.aws.com"},
		{Name: "odd.example.com", Allocatable: &storagev1.VolumeNodeResources{}},
	}}}
	if got, want := fmt.Sprint(volumeLimits(s, "n1")), "map[ebs.csi.aws.com:2 odd.example.com:0]"; got != want {
		t.Errorf("volumeLimits = %s, want %s", got, want)
	}
	if got := volumeLimits(s, "n2"); got != nil {
		t.Errorf("no CSINode: %v", got)
	}
}
