package view

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// Columns of printPersistentVolume, printPersistentVolumeClaim,
// printStorageClass and printCSINode.
var (
	persistentVolumeColumns = []metav1.TableColumnDefinition{nameCol(), col("Capacity"), col("Access Modes"), col("Reclaim Policy"),
		col("Status"), col("Claim"), col("StorageClass"), col("VolumeAttributesClass"), col("Reason"), col("Age"), wideCol("VolumeMode")}
	persistentVolumeClaimColumns = []metav1.TableColumnDefinition{nameCol(), col("Status"), col("Volume"), col("Capacity"),
		col("Access Modes"), col("StorageClass"), col("VolumeAttributesClass"), col("Age"), wideCol("VolumeMode")}
	storageClassColumns = []metav1.TableColumnDefinition{nameCol(), col("Provisioner"), col("ReclaimPolicy"),
		col("VolumeBindingMode"), col("AllowVolumeExpansion"), col("Age")}
	csiNodeColumns = []metav1.TableColumnDefinition{nameCol(), col("Drivers"), col("Age")}
)

// accessModesText is GetAccessModesAsString: fixed order, short names.
func accessModesText(modes []corev1.PersistentVolumeAccessMode) string {
	has := map[corev1.PersistentVolumeAccessMode]bool{}
	for _, m := range modes {
		has[m] = true
	}
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		if has[m.mode] {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

func volumeModeText(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

func vacText(name *string) string {
	if name == nil || *name == "" {
		return "<unset>"
	}
	return *name
}

func persistentVolumeRow(s *cluster.State, pv *corev1.PersistentVolume) metav1.TableRow {
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	status := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		status = "Terminating"
	}
	capacity := pv.Spec.Capacity[corev1.ResourceStorage]
	return row(pv, pv.Name, capacity.String(), accessModesText(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		status, claim, pv.Spec.StorageClassName, vacText(pv.Spec.VolumeAttributesClassName), pv.Status.Reason,
		since(s, pv.CreationTimestamp), volumeModeText(pv.Spec.VolumeMode))
}

func persistentVolumeClaimRow(s *cluster.State, pvc *corev1.PersistentVolumeClaim) metav1.TableRow {
	status := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		status = "Terminating"
	}
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		modes = accessModesText(pvc.Status.AccessModes)
		if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
			capacity = q.String()
		}
	}
	className := ""
	if pvc.Spec.StorageClassName != nil {
		className = *pvc.Spec.StorageClassName
	}
	return row(pvc, pvc.Name, status, pvc.Spec.VolumeName, capacity, modes, className,
		vacText(pvc.Spec.VolumeAttributesClassName), since(s, pvc.CreationTimestamp), volumeModeText(pvc.Spec.VolumeMode))
}

func storageClassRow(s *cluster.State, sc *storagev1.StorageClass) metav1.TableRow {
	name := sc.Name
	if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
		sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true" {
		name += " (default)"
	}
	reclaim, mode := string(corev1.PersistentVolumeReclaimDelete), string(storagev1.VolumeBindingImmediate)
	if sc.ReclaimPolicy != nil {
		reclaim = string(*sc.ReclaimPolicy)
	}
	if sc.VolumeBindingMode != nil {
		mode = string(*sc.VolumeBindingMode)
	}
	expansion := sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
	return row(sc, name, sc.Provisioner, reclaim, mode, expansion, since(s, sc.CreationTimestamp))
}

func csiNodeRow(s *cluster.State, n *storagev1.CSINode) metav1.TableRow {
	return row(n, n.Name, int64(len(n.Spec.Drivers)), since(s, n.CreationTimestamp))
}
