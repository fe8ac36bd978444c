package view

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

const (
	testClaimUID   = "0f4c2d1e-8a6b-4c3d-9e2f-1a2b3c4d5e6f"
	testVolumeName = "pvc-" + testClaimUID
	testNode       = "ip-10-42-11-43.us-west-2.compute.internal"
	testProvSource = "ebs.csi.aws.com_ebs-csi-controller-7d9f8c6b5-x2x4l_0b1c"
)

// describeStorageState holds what berth's volume controllers leave behind
// for a StatefulSet claim: the EKS gp2 default class, a gp3 CSI class, the
// bound claim and its CSI volume (zone node affinity), a migrated in-tree
// gp2 volume, a pending claim, and the pod using the bound claim.
func describeStorageState() *cluster.State {
	s := cluster.New("1.34", 1)
	s.Now = cluster.Epoch.Add(10 * time.Minute)
	created := at(s, 10*time.Minute)
	del, wffc := corev1.PersistentVolumeReclaimDelete, storagev1.VolumeBindingWaitForFirstConsumer
	fs := corev1.PersistentVolumeFilesystem
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}

	s.StorageClasses["gp2"] = &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gp2", UID: "uid-gp2", CreationTimestamp: created,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "kubernetes.io/aws-ebs", Parameters: map[string]string{"fsType": "ext4", "type": "gp2"},
		ReclaimPolicy: &del, VolumeBindingMode: &wffc,
	}
	s.StorageClasses["gp3"] = &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "gp3", UID: "uid-gp3", CreationTimestamp: created},
		Provisioner: "ebs.csi.aws.com", Parameters: map[string]string{"type": "gp3", "csi.storage.k8s.io/fstype": "xfs"},
		ReclaimPolicy: &del, VolumeBindingMode: &wffc, AllowVolumeExpansion: ptr(true),
		MountOptions: []string{"noatime", "nodiratime"},
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: "topology.kubernetes.io/zone", Values: []string{"us-west-2a", "us-west-2b"}},
		}}},
	}

	class := "gp3"
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-web-0", Namespace: "default", UID: testClaimUID, CreationTimestamp: created,
			Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				"pv.kubernetes.io/bind-completed":               "yes",
				"pv.kubernetes.io/bound-by-controller":          "yes",
				"volume.beta.kubernetes.io/storage-provisioner": "ebs.csi.aws.com",
				"volume.kubernetes.io/selected-node":            testNode,
				"volume.kubernetes.io/storage-provisioner":      "ebs.csi.aws.com",
			},
			Finalizers: []string{"kubernetes.io/pvc-protection"}},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: testVolumeName, VolumeMode: &fs, AccessModes: rwo,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Gi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: rwo,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Gi")}},
	}
	s.PersistentVolumeClaims["default/data-web-0"] = claim
	s.PersistentVolumeClaims["default/data-web-1"] = &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-web-1", Namespace: "default", UID: "uid-data-web-1", CreationTimestamp: created,
			Finalizers: []string{"kubernetes.io/pvc-protection"}},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeMode: &fs, AccessModes: rwo,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Gi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}

	s.PersistentVolumes[testVolumeName] = &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: testVolumeName, UID: "uid-pv", CreationTimestamp: at(s, 9*time.Minute),
			Annotations: map[string]string{
				"pv.kubernetes.io/provisioned-by":                            "ebs.csi.aws.com",
				"volume.kubernetes.io/provisioner-deletion-secret-name":      "",
				"volume.kubernetes.io/provisioner-deletion-secret-namespace": "",
			},
			Finalizers: []string{"external-provisioner.volume.kubernetes.io/finalizer"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Gi")},
			AccessModes: rwo, PersistentVolumeReclaimPolicy: del, StorageClassName: "gp3", VolumeMode: &fs,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: "data-web-0", UID: testClaimUID, APIVersion: "v1"},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "ebs.csi.aws.com", VolumeHandle: "vol-00a1b2c3d4e5f6789", FSType: "xfs",
				VolumeAttributes: map[string]string{"storage.kubernetes.io/csiProvisionerIdentity": "1704067200000-1-ebs.csi.aws.com"},
			}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2a"}}},
			}}}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	s.PersistentVolumes["pvc-intree"] = &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-intree", UID: "uid-intree", CreationTimestamp: created,
			Labels: map[string]string{"topology.kubernetes.io/region": "us-west-2", "topology.kubernetes.io/zone": "us-west-2b"},
			Annotations: map[string]string{
				"pv.kubernetes.io/migrated-to":    "ebs.csi.aws.com",
				"pv.kubernetes.io/provisioned-by": "kubernetes.io/aws-ebs",
			},
			Finalizers: []string{"external-provisioner.volume.kubernetes.io/finalizer"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: rwo, PersistentVolumeReclaimPolicy: del, StorageClassName: "gp2", VolumeMode: &fs,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "db", Name: "data-db-0"},
			PersistentVolumeSource: corev1.PersistentVolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{
				VolumeID: "aws://us-west-2b/vol-0fedcba9876543210", FSType: "ext4"}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2b"}},
					{Key: "topology.kubernetes.io/region", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2"}},
				},
			}}}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}

	// web-0 mounts the claim; other-ns mounts a claim of the same name in
	// another namespace and must not be listed.
	for _, p := range []struct{ ns, name string }{{"default", "web-0"}, {"other", "web-0"}, {"default", "web-1"}} {
		claimName := "data-" + p.name
		s.Pods[cluster.Key(p.ns, p.name)] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.ns, UID: types.UID("uid-" + p.ns + "-" + p.name), CreationTimestamp: created},
			Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}}}},
		}
	}

	now := s.Now
	ref := cluster.Regarding("PersistentVolumeClaim", "v1", claim)
	s.Now = now.Add(-9*time.Minute - 30*time.Second)
	s.Record(cluster.EventSource{Component: "persistentvolume-controller"}, ref, corev1.EventTypeNormal, "WaitForFirstConsumer",
		"waiting for first consumer to be created before binding")
	s.Now = now.Add(-9*time.Minute - 20*time.Second)
	s.Record(cluster.EventSource{Component: testProvSource}, ref, corev1.EventTypeNormal, "Provisioning",
		`External provisioner is provisioning volume for claim "default/data-web-0"`)
	s.Now = now.Add(-9 * time.Minute)
	s.Record(cluster.EventSource{Component: testProvSource}, ref, corev1.EventTypeNormal, "ProvisioningSucceeded",
		"Successfully provisioned volume "+testVolumeName)
	s.Now = now
	return s
}

func TestDescribeStorage(t *testing.T) {
	tests := []struct {
		name, kind, namespace, object string
		want                          string
	}{
		{
			name: "CSI volume with zone node affinity", kind: "pv", object: testVolumeName,
			want: "Name:              " + testVolumeName + "\n" +
				"Labels:            <none>\n" +
				"Annotations:       pv.kubernetes.io/provisioned-by: ebs.csi.aws.com\n" +
				"                   volume.kubernetes.io/provisioner-deletion-secret-name: \n" +
				"                   volume.kubernetes.io/provisioner-deletion-secret-namespace: \n" +
				"Finalizers:        [external-provisioner.volume.kubernetes.io/finalizer]\n" +
				"StorageClass:      gp3\n" +
				"Status:            Bound\n" +
				"Claim:             default/data-web-0\n" +
				"Reclaim Policy:    Delete\n" +
				"Access Modes:      RWO\n" +
				"VolumeMode:        Filesystem\n" +
				"Capacity:          4Gi\n" +
				"Node Affinity:     \n" +
				"  Required Terms:  \n" +
				"    Term 0:        topology.kubernetes.io/zone in [us-west-2a]\n" +
				"Message:           \n" +
				"Source:\n" +
				"    Type:              CSI (a Container Storage Interface (CSI) volume source)\n" +
				"    Driver:            ebs.csi.aws.com\n" +
				"    FSType:            xfs\n" +
				"    VolumeHandle:      vol-00a1b2c3d4e5f6789\n" +
				"    ReadOnly:          false\n" +
				"    VolumeAttributes:      storage.kubernetes.io/csiProvisionerIdentity=1704067200000-1-ebs.csi.aws.com\n" +
				"Events:                <none>\n",
		},
		{
			name: "migrated in-tree gp2 volume", kind: "persistentvolume", object: "pvc-intree",
			want: "Name:              pvc-intree\n" +
				"Labels:            topology.kubernetes.io/region=us-west-2\n" +
				"                   topology.kubernetes.io/zone=us-west-2b\n" +
				"Annotations:       pv.kubernetes.io/migrated-to: ebs.csi.aws.com\n" +
				"                   pv.kubernetes.io/provisioned-by: kubernetes.io/aws-ebs\n" +
				"Finalizers:        [external-provisioner.volume.kubernetes.io/finalizer]\n" +
				"StorageClass:      gp2\n" +
				"Status:            Bound\n" +
				"Claim:             db/data-db-0\n" +
				"Reclaim Policy:    Delete\n" +
				"Access Modes:      RWO\n" +
				"VolumeMode:        Filesystem\n" +
				"Capacity:          1Gi\n" +
				"Node Affinity:     \n" +
				"  Required Terms:  \n" +
				"    Term 0:        topology.kubernetes.io/zone in [us-west-2b]\n" +
				"                   topology.kubernetes.io/region in [us-west-2]\n" +
				"Message:           \n" +
				"Source:\n" +
				"    Type:       AWSElasticBlockStore (a Persistent Disk resource in AWS)\n" +
				"    VolumeID:   aws://us-west-2b/vol-0fedcba9876543210\n" +
				"    FSType:     ext4\n" +
				"    Partition:  0\n" +
				"    ReadOnly:   false\n" +
				"Events:         <none>\n",
		},
		{
			name: "bound claim used by a pod", kind: "pvc", namespace: "default", object: "data-web-0",
			want: "Name:          data-web-0\n" +
				"Namespace:     default\n" +
				"StorageClass:  gp3\n" +
				"Status:        Bound\n" +
				"Volume:        " + testVolumeName + "\n" +
				"Labels:        app=web\n" +
				"Annotations:   pv.kubernetes.io/bind-completed: yes\n" +
				"               pv.kubernetes.io/bound-by-controller: yes\n" +
				"               volume.beta.kubernetes.io/storage-provisioner: ebs.csi.aws.com\n" +
				"               volume.kubernetes.io/selected-node: " + testNode + "\n" +
				"               volume.kubernetes.io/storage-provisioner: ebs.csi.aws.com\n" +
				"Finalizers:    [kubernetes.io/pvc-protection]\n" +
				"Capacity:      4Gi\n" +
				"Access Modes:  RWO\n" +
				"VolumeMode:    Filesystem\n" +
				"Used By:       web-0\n" +
				"Events:\n" +
				"  Type    Reason                 Age    From                                                     Message\n" +
				"  ----    ------                 ----   ----                                                     -------\n" +
				"  Normal  WaitForFirstConsumer   9m30s  persistentvolume-controller                              waiting for first consumer to be created before binding\n" +
				"  Normal  Provisioning           9m20s  " + testProvSource + "  External provisioner is provisioning volume for claim \"default/data-web-0\"\n" +
				"  Normal  ProvisioningSucceeded  9m     " + testProvSource + "  Successfully provisioned volume " + testVolumeName + "\n",
		},
		{
			name: "pending claim shows no capacity", kind: "persistentvolumeclaim", namespace: "default", object: "data-web-1",
			want: "Name:          data-web-1\n" +
				"Namespace:     default\n" +
				"StorageClass:  gp3\n" +
				"Status:        Pending\n" +
				"Volume:        \n" +
				"Labels:        <none>\n" +
				"Annotations:   <none>\n" +
				"Finalizers:    [kubernetes.io/pvc-protection]\n" +
				"Capacity:      \n" +
				"Access Modes:  \n" +
				"VolumeMode:    Filesystem\n" +
				"Used By:       web-1\n" +
				"Events:        <none>\n",
		},
		{
			name: "EKS default gp2 class", kind: "sc", object: "gp2",
			want: "Name:                  gp2\n" +
				"IsDefaultClass:        Yes\n" +
				"Annotations:           storageclass.kubernetes.io/is-default-class=true\n" +
				"Provisioner:           kubernetes.io/aws-ebs\n" +
				"Parameters:            fsType=ext4,type=gp2\n" +
				"AllowVolumeExpansion:  <unset>\n" +
				"MountOptions:          <none>\n" +
				"ReclaimPolicy:         Delete\n" +
				"VolumeBindingMode:     WaitForFirstConsumer\n" +
				"Events:                <none>\n",
		},
		{
			name: "CSI class with mount options and allowed topologies", kind: "storageclass", object: "gp3",
			want: "Name:                  gp3\n" +
				"IsDefaultClass:        No\n" +
				"Annotations:           <none>\n" +
				"Provisioner:           ebs.csi.aws.com\n" +
				"Parameters:            csi.storage.k8s.io/fstype=xfs,type=gp3\n" +
				"AllowVolumeExpansion:  True\n" +
				"MountOptions:\n" +
				"  noatime\n" +
				"  nodiratime\n" +
				"ReclaimPolicy:      Delete\n" +
				"VolumeBindingMode:  WaitForFirstConsumer\n" +
				"AllowedTopologies:  \n" +
				"  Term 0:           topology.kubernetes.io/zone in [us-west-2a, us-west-2b]\n" +
				"Events:             <none>\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Describe(&out, describeStorageState(), tt.kind, tt.namespace, []string{tt.object}, ""); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", out.String(), tt.want)
			}
		})
	}
}

// TestUsedByListsEveryMountAndOwner checks getPodsForPVC's quirks: a pod
// mounting the claim twice is listed twice, an owning pod (generic
// ephemeral volume) once, and names come out sorted.
func TestUsedByListsEveryMountAndOwner(t *testing.T) {
	s := describeStorageState()
	claim := s.PersistentVolumeClaims["default/data-web-0"]
	claim.OwnerReferences = []metav1.OwnerReference{{Kind: "Pod", Name: "a-owner", UID: "uid-owner"}, {Kind: "Pod", Name: "web-0", UID: "uid-default-web-0"}}
	s.Pods["default/a-owner"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a-owner", Namespace: "default", UID: "uid-owner"}}
	web0 := s.Pods["default/web-0"]
	web0.Spec.Volumes = append(web0.Spec.Volumes, web0.Spec.Volumes[0])
	got := podsUsingClaim(s, claim)
	want := []string{"a-owner", "web-0", "web-0"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestDescribeTerminatingVolume(t *testing.T) {
	s := describeStorageState()
	pv := s.PersistentVolumes["pvc-intree"]
	pv.DeletionTimestamp = ptr(at(s, 45*time.Second))
	var out bytes.Buffer
	if err := Describe(&out, s, "pv", "", []string{"pvc-intree"}, ""); err != nil {
		t.Fatal(err)
	}
	if want := "Status:            Terminating (lasts 45s)\n"; !bytes.Contains(out.Bytes(), []byte(want)) {
		t.Errorf("missing %q in:\n%s", want, out.String())
	}
}
