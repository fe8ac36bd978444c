package view

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/berth-sim/berth/internal/cluster"
)

// Default-class annotations as kubectl's storage util reads them (GA first).
const (
	annIsDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	annBetaIsDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"
)

// describePersistentVolume follows kubectl's describePersistentVolume.
func describePersistentVolume(s *cluster.State, pv *corev1.PersistentVolume) string {
	events := eventQuery{kind: "PersistentVolume", name: pv.Name, uids: uidsOf(pv)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", pv.Name)
		printLabelsMultiline(w, "Labels", pv.Labels)
		printAnnotationsMultiline(w, "Annotations", pv.Annotations)
		w.write(level0, "Finalizers:\t%v\n", pv.Finalizers)
		w.write(level0, "StorageClass:\t%s\n", storagehelpers.GetPersistentVolumeClass(pv))
		if pv.DeletionTimestamp != nil {
			w.write(level0, "Status:\tTerminating (lasts %s)\n", since(s, *pv.DeletionTimestamp))
		} else {
			w.write(level0, "Status:\t%v\n", pv.Status.Phase)
		}
		claim := ""
		if ref := pv.Spec.ClaimRef; ref != nil {
			claim = ref.Namespace + "/" + ref.Name
		}
		w.write(level0, "Claim:\t%s\n", claim)
		w.write(level0, "Reclaim Policy:\t%v\n", pv.Spec.PersistentVolumeReclaimPolicy)
		w.write(level0, "Access Modes:\t%s\n", accessModesText(pv.Spec.AccessModes))
		if pv.Spec.VolumeMode != nil {
			w.write(level0, "VolumeMode:\t%v\n", *pv.Spec.VolumeMode)
		}
		capacity := pv.Spec.Capacity[corev1.ResourceStorage]
		w.write(level0, "Capacity:\t%s\n", capacity.String())
		printVolumeNodeAffinity(w, pv.Spec.NodeAffinity)
		w.write(level0, "Message:\t%s\n", pv.Status.Message)
		w.write(level0, "Source:\n")
		describePersistentVolumeSource(w, &pv.Spec.PersistentVolumeSource)
		describeEvents(s, events, w)
	})
}

// describePersistentVolumeSource prints the sources berth's provisioner
// creates (CSI, and in-tree EBS for migrated gp2 claims) plus the simple
// ones a manifest may hand-write; others are "<unknown>" here.
func describePersistentVolumeSource(w prefixWriter, src *corev1.PersistentVolumeSource) {
	switch {
	case src.HostPath != nil:
		hostPathType := "<none>"
		if src.HostPath.Type != nil {
			hostPathType = string(*src.HostPath.Type)
		}
		w.write(level2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%v\n    HostPathType:\t%v\n", src.HostPath.Path, hostPathType)
	case src.AWSElasticBlockStore != nil:
		ebs := src.AWSElasticBlockStore
		w.write(level2, "Type:\tAWSElasticBlockStore (a Persistent Disk resource in AWS)\n    VolumeID:\t%v\n    FSType:\t%v\n    Partition:\t%v\n    ReadOnly:\t%v\n",
			ebs.VolumeID, ebs.FSType, ebs.Partition, ebs.ReadOnly)
	case src.NFS != nil:
		w.write(level2, "Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n    Server:\t%v\n    Path:\t%v\n    ReadOnly:\t%v\n",
			src.NFS.Server, src.NFS.Path, src.NFS.ReadOnly)
	case src.Local != nil:
		w.write(level2, "Type:\tLocalVolume (a persistent volume backed by local storage on a node)\n    Path:\t%v\n", src.Local.Path)
	case src.CSI != nil:
		csi := src.CSI
		w.write(level2, "Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t%v\n    FSType:\t%v\n    VolumeHandle:\t%v\n    ReadOnly:\t%v\n",
			csi.Driver, csi.FSType, csi.VolumeHandle, csi.ReadOnly)
		describeVolumeAttributes(w, csi.VolumeAttributes)
	default:
		w.write(level1, "<unknown>\n")
	}
}

// printVolumeNodeAffinity prints "Node Affinity:" with its required terms,
// each requirement as "key op [v1, v2]" with the operator lower-cased.
func printVolumeNodeAffinity(w prefixWriter, affinity *corev1.VolumeNodeAffinity) {
	w.write(level0, "Node Affinity:\t")
	if affinity == nil || affinity.Required == nil {
		w.writeLine("<none>")
		return
	}
	w.writeLine("")
	w.write(level1, "Required Terms:\t")
	if len(affinity.Required.NodeSelectorTerms) == 0 {
		w.writeLine("<none>")
		return
	}
	w.writeLine("")
	for i, term := range affinity.Required.NodeSelectorTerms {
		w.write(level2, "Term %v:\t", i)
		if len(term.MatchExpressions) == 0 {
			w.writeLine("<none>")
			continue
		}
		for j, req := range term.MatchExpressions {
			if j != 0 {
				w.write(level2, "\t")
			}
			expr := req.Key + " " + strings.ToLower(string(req.Operator))
			if len(req.Values) > 0 {
				expr += " [" + strings.Join(req.Values, ", ") + "]"
			}
			w.write(level0, "%s\n", expr)
		}
	}
}

// describePersistentVolumeClaim follows kubectl's describePersistentVolumeClaim.
func describePersistentVolumeClaim(s *cluster.State, pvc *corev1.PersistentVolumeClaim) string {
	events := eventQuery{kind: "PersistentVolumeClaim", namespace: pvc.Namespace, name: pvc.Name, uids: uidsOf(pvc)}.find(s)
	pods := podsUsingClaim(s, pvc)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", pvc.Name)
		w.write(level0, "Namespace:\t%s\n", pvc.Namespace)
		w.write(level0, "StorageClass:\t%s\n", storagehelpers.GetPersistentVolumeClaimClass(pvc))
		if pvc.DeletionTimestamp != nil {
			w.write(level0, "Status:\tTerminating (lasts %s)\n", since(s, *pvc.DeletionTimestamp))
		} else {
			w.write(level0, "Status:\t%v\n", pvc.Status.Phase)
		}
		w.write(level0, "Volume:\t%s\n", pvc.Spec.VolumeName)
		printLabelsMultiline(w, "Labels", pvc.Labels)
		printAnnotationsMultiline(w, "Annotations", pvc.Annotations)
		w.write(level0, "Finalizers:\t%v\n", pvc.Finalizers)
		// Capacity and access modes come from status, and only once bound.
		capacity, modes := "", ""
		if pvc.Spec.VolumeName != "" {
			modes = accessModesText(pvc.Status.AccessModes)
			q := pvc.Status.Capacity[corev1.ResourceStorage]
			capacity = q.String()
		}
		w.write(level0, "Capacity:\t%s\n", capacity)
		w.write(level0, "Access Modes:\t%s\n", modes)
		if pvc.Spec.VolumeMode != nil {
			w.write(level0, "VolumeMode:\t%v\n", *pvc.Spec.VolumeMode)
		}
		if ds := pvc.Spec.DataSource; ds != nil {
			w.write(level0, "DataSource:\n")
			if ds.APIGroup != nil {
				w.write(level1, "APIGroup:\t%v\n", *ds.APIGroup)
			}
			w.write(level1, "Kind:\t%v\n", ds.Kind)
			w.write(level1, "Name:\t%v\n", ds.Name)
		}
		w.write(level0, "Used By:\t")
		if len(pods) == 0 {
			w.writeLine("<none>")
		}
		for i, name := range pods {
			if i != 0 {
				w.write(level0, "\t")
			}
			w.write(level0, "%s\n", name)
		}
		if len(pvc.Status.Conditions) > 0 {
			w.write(level0, "Conditions:\n")
			w.write(level1, "Type\tStatus\tLastProbeTime\tLastTransitionTime\tReason\tMessage\n")
			w.write(level1, "----\t------\t-----------------\t------------------\t------\t-------\n")
			for _, c := range pvc.Status.Conditions {
				w.write(level1, "%v \t%v \t%s \t%s \t%v \t%v\n", c.Type, c.Status,
					c.LastProbeTime.Time.Format(describeTimeFormat), c.LastTransitionTime.Time.Format(describeTimeFormat),
					c.Reason, c.Message)
			}
		}
		describeEvents(s, events, w)
	})
}

// podsUsingClaim is kubectl's getPodsForPVC: every pod of the namespace with
// a volume naming the claim (once per such volume, as upstream), then pods
// that own the claim (generic ephemeral volumes) not yet listed; names are
// sorted for printing.
func podsUsingClaim(s *cluster.State, pvc *corev1.PersistentVolumeClaim) []string {
	var nsPods []*corev1.Pod
	for _, k := range cluster.SortedKeys(s.Pods) {
		if p := s.Pods[k]; p.Namespace == pvc.Namespace {
			nsPods = append(nsPods, p)
		}
	}
	var users []*corev1.Pod
	for _, p := range nsPods {
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
				users = append(users, p)
			}
		}
	}
	for _, ref := range pvc.OwnerReferences {
		if ref.Kind != "Pod" {
			continue
		}
		for _, p := range nsPods {
			if p.UID != ref.UID {
				continue
			}
			listed := false
			for _, u := range users {
				listed = listed || u.UID == p.UID
			}
			if !listed {
				users = append(users, p)
			}
			break
		}
	}
	names := make([]string, 0, len(users))
	for _, p := range users {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// describeStorageClass follows kubectl's describeStorageClass; note that,
// unlike PV and PVC, its annotations are one FormatLabels line with nothing
// hidden.
func describeStorageClass(s *cluster.State, sc *storagev1.StorageClass) string {
	events := eventQuery{kind: "StorageClass", name: sc.Name, uids: uidsOf(sc)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", sc.Name)
		w.write(level0, "IsDefaultClass:\t%s\n", isDefaultClassText(sc))
		w.write(level0, "Annotations:\t%s\n", labels.FormatLabels(sc.Annotations))
		w.write(level0, "Provisioner:\t%s\n", sc.Provisioner)
		w.write(level0, "Parameters:\t%s\n", labels.FormatLabels(sc.Parameters))
		expansion := "<unset>"
		if sc.AllowVolumeExpansion != nil {
			expansion = printBool(*sc.AllowVolumeExpansion)
		}
		w.write(level0, "AllowVolumeExpansion:\t%s\n", expansion)
		if len(sc.MountOptions) == 0 {
			w.write(level0, "MountOptions:\t<none>\n")
		} else {
			w.write(level0, "MountOptions:\n")
			for _, o := range sc.MountOptions {
				w.write(level1, "%s\n", o)
			}
		}
		if sc.ReclaimPolicy != nil {
			w.write(level0, "ReclaimPolicy:\t%s\n", *sc.ReclaimPolicy)
		}
		if sc.VolumeBindingMode != nil {
			w.write(level0, "VolumeBindingMode:\t%s\n", *sc.VolumeBindingMode)
		}
		if sc.AllowedTopologies != nil {
			printAllowedTopologies(w, sc.AllowedTopologies)
		}
		describeEvents(s, events, w)
	})
}

func isDefaultClassText(sc *storagev1.StorageClass) string {
	if sc.Annotations[annIsDefaultClass] == "true" || sc.Annotations[annBetaIsDefaultClass] == "true" {
		return "Yes"
	}
	return "No"
}

// printAllowedTopologies prints each term's label requirements as
// "key in [v1, v2]" (topology terms only know "in").
func printAllowedTopologies(w prefixWriter, terms []corev1.TopologySelectorTerm) {
	w.write(level0, "AllowedTopologies:\t")
	if len(terms) == 0 {
		w.writeLine("<none>")
		return
	}
	w.writeLine("")
	for i, term := range terms {
		w.write(level1, "%s:\t", fmt.Sprintf("Term %d", i))
		if len(term.MatchLabelExpressions) == 0 {
			w.writeLine("<none>")
			continue
		}
		for j, req := range term.MatchLabelExpressions {
			if j != 0 {
				w.write(level1, "\t")
			}
			expr := req.Key + " in"
			if len(req.Values) > 0 {
				expr += " [" + strings.Join(req.Values, ", ") + "]"
			}
			w.write(level0, "%s\n", expr)
		}
	}
}
