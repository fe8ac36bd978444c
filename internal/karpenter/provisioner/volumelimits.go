package provisioner

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
)

// inTreeDrivers are the CSI drivers that took over in-tree volume plugins,
// for storage classes still naming the old provisioner.
var inTreeDrivers = map[string]string{
	"kubernetes.io/aws-ebs":         "ebs.csi.aws.com",
	"kubernetes.io/gce-pd":          "pd.csi.storage.gke.io",
	"kubernetes.io/azure-disk":      "disk.csi.azure.com",
	"kubernetes.io/azure-file":      "file.csi.azure.com",
	"kubernetes.io/cinder":          "cinder.csi.openstack.org",
	"kubernetes.io/vsphere-volume":  "csi.vsphere.vmware.com",
	"kubernetes.io/portworx-volume": "pxd.portworx.com",
}

// podVolumes are the claims a pod uses by the driver that attaches them,
// as Karpenter counts them against attach limits: a bound claim by its
// volume's CSI driver (an in-tree EBS volume as the EBS driver's), an
// unbound one by its storage class's provisioner. Claims, volumes or
// classes that cannot be found, and volumes of no CSI driver, are not
// counted (docs/karpenter-provisioning.md#volume-limits).
func podVolumes(s *cluster.State, pod *corev1.Pod) provisioning.Volumes {
	var out provisioning.Volumes
	for _, v := range pod.Spec.Volumes {
		pvc, err := claimOf(s, pod, v)
		if err != nil || pvc == nil {
			continue
		}
		if driver := claimDriver(s, pvc); driver != "" {
			if out == nil {
				out = provisioning.Volumes{}
			}
			out.Add(driver, cluster.Key(pvc.Namespace, pvc.Name))
		}
	}
	return out
}

func claimDriver(s *cluster.State, pvc *corev1.PersistentVolumeClaim) string {
	if pvc.Spec.VolumeName != "" {
		pv := s.PersistentVolumes[pvc.Spec.VolumeName]
		switch {
		case pv == nil:
			return ""
		case pv.Spec.CSI != nil:
			return pv.Spec.CSI.Driver
		case pv.Spec.AWSElasticBlockStore != nil:
			return "ebs.csi.aws.com"
		}
		return ""
	}
	if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName == "" {
		return ""
	}
	sc := s.StorageClasses[*pvc.Spec.StorageClassName]
	if sc == nil {
		return ""
	}
	if d, ok := inTreeDrivers[sc.Provisioner]; ok {
		return d
	}
	return sc.Provisioner
}

// volumeLimits are the attach limits the node's CSINode reports, by
// driver; a driver entry without an allocatable count is skipped, one with
// an allocatable but no count allows nothing, as Karpenter reads them.
func volumeLimits(s *cluster.State, node string) map[string]int {
	cn := s.CSINodes[node]
	if cn == nil {
		return nil
	}
	var out map[string]int
	for _, d := range cn.Spec.Drivers {
		if d.Allocatable == nil {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		n := 0
		if d.Allocatable.Count != nil {
			n = int(*d.Allocatable.Count)
		}
		out[d.Name] = n
	}
	return out
}

// nodeVolumes are the claims the node's pods use.
func nodeVolumes(s *cluster.State, pods []*corev1.Pod) provisioning.Volumes {
	var out provisioning.Volumes
	for _, p := range pods {
		if v := podVolumes(s, p); v != nil {
			if out == nil {
				out = provisioning.Volumes{}
			}
			for driver, claims := range v {
				for c := range claims {
					out.Add(driver, c)
				}
			}
		}
	}
	return out
}
