package manifest

import (
	"strings"
	"testing"
)

func TestValidateStorage(t *testing.T) {
	const (
		scHead  = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\n"
		pvcHead = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec:\n"
		pvHead  = "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\nspec:\n"
		req     = "  resources: {requests: {storage: 10Gi}}\n"
	)
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{name: "gp3 class", doc: scHead + "provisioner: ebs.csi.aws.com\nparameters: {type: gp3}\nvolumeBindingMode: WaitForFirstConsumer\n"},
		{name: "in-tree gp2 class", doc: scHead + "provisioner: kubernetes.io/aws-ebs\nparameters: {type: gp2, fsType: ext4}\n"},
		{name: "other provisioners keep their own parameters", doc: scHead + "provisioner: efs.csi.aws.com\nparameters: {type: whatever}\n"},
		{
			name: "bad EBS type, reclaim policy and binding mode",
			doc:  scHead + "provisioner: ebs.csi.aws.com\nparameters: {type: gp4}\nreclaimPolicy: Recycle\nvolumeBindingMode: Later\n",
			want: []string{
				`(StorageClass fast): parameters.type: Unsupported value: "gp4": supported values: "gp2", "gp3", "io1", "io2", "sc1", "st1", "standard"`,
				`(StorageClass fast): reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"`,
				`(StorageClass fast): volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"`,
			},
		},
		{
			name: "missing provisioner",
			doc:  scHead,
			want: []string{`(StorageClass fast): provisioner: Required value`},
		},
		{name: "claim", doc: pvcHead + "  accessModes: [ReadWriteOnce]\n  storageClassName: gp2\n" + req},
		{
			name: "claim without access modes or size",
			doc:  pvcHead + "  storageClassName: gp2\n",
			want: []string{
				`(PersistentVolumeClaim data): spec.accessModes: Required value: at least 1 access mode is required`,
				`(PersistentVolumeClaim data): spec.resources[storage]: Required value`,
			},
		},
		{
			name: "ReadWriteOncePod alone",
			doc:  pvcHead + "  accessModes: [ReadWriteOncePod, ReadWriteOnce, WriteMany]\n" + req,
			want: []string{
				`(PersistentVolumeClaim data): spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes`,
				`(PersistentVolumeClaim data): spec.accessModes: Unsupported value: "WriteMany": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
			},
		},
		{
			name: "static volume with node affinity",
			doc: pvHead + "  capacity: {storage: 5Gi}\n  accessModes: [ReadWriteOnce]\n" +
				"  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}\n" +
				"  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [eu-west-1a]}]}]}}\n",
		},
		{
			name: "volume without capacity, bad policy, empty affinity",
			doc:  pvHead + "  accessModes: [ReadWriteOnce]\n  persistentVolumeReclaimPolicy: Keep\n  nodeAffinity: {required: {nodeSelectorTerms: []}}\n",
			want: []string{
				`(PersistentVolume pv1): spec.capacity: Required value`,
				`(PersistentVolume pv1): spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Retain"`,
				`(PersistentVolume pv1): spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Decode("v.yaml", []byte(tt.doc))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			err = Validate(objs[0])
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if want := prefix + tt.want[i]; got[i] != want {
					t.Errorf("error %d\n  got  %s\n  want %s", i, got[i], want)
				}
			}
		})
	}
}
