package view

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/cluster"
)

// describeServiceAccount follows kubectl's describeServiceAccount. Since
// Kubernetes 1.28 kubectl prints no "Mountable secrets" or "Tokens" lines
// (token secrets are no longer auto-created), only the pull secrets, the
// first under the header and the rest under a blank header of its width.
func describeServiceAccount(s *cluster.State, sa *corev1.ServiceAccount) string {
	events := eventQuery{kind: "ServiceAccount", namespace: sa.Namespace, name: sa.Name, uids: uidsOf(sa)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", sa.Name)
		w.write(level0, "Namespace:\t%s\n", sa.Namespace)
		printLabelsMultiline(w, "Labels", sa.Labels)
		printAnnotationsMultiline(w, "Annotations", sa.Annotations)
		const pullHeader = "Image pull secrets:"
		if len(sa.ImagePullSecrets) == 0 {
			w.write(level0, "%s\t<none>\n", pullHeader)
		}
		header := pullHeader
		for _, ref := range sa.ImagePullSecrets {
			w.write(level0, "%s\t%s\n", header, ref.Name)
			header = "                   " // len(pullHeader) spaces
		}
		describeEvents(s, events, w)
	})
}

// describeConfigMap follows kubectl's ConfigMapDescriber: each data key
// with its value below a "----" rule, then the binary keys' sizes.
func describeConfigMap(s *cluster.State, cm *corev1.ConfigMap) string {
	events := eventQuery{kind: "ConfigMap", namespace: cm.Namespace, name: cm.Name, uids: uidsOf(cm)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", cm.Name)
		w.write(level0, "Namespace:\t%s\n", cm.Namespace)
		printLabelsMultiline(w, "Labels", cm.Labels)
		printAnnotationsMultiline(w, "Annotations", cm.Annotations)
		w.write(level0, "\nData\n====\n")
		for _, k := range sortedMapKeys(cm.Data) {
			w.write(level0, "%s:\n----\n", k)
			w.write(level0, "%s\n", cm.Data[k])
			w.write(level0, "\n")
		}
		w.write(level0, "\nBinaryData\n====\n")
		for _, k := range slices.Sorted(maps.Keys(cm.BinaryData)) {
			w.write(level0, "%s: %d bytes\n", k, len(cm.BinaryData[k]))
		}
		w.write(level0, "\n")
		describeEvents(s, events, w)
	})
}

// describeSecret follows kubectl's describeSecret: sizes only, except a
// service-account token secret's token, which kubectl prints in full.
// kubectl looks up no events for secrets.
func describeSecret(_ *cluster.State, secret *corev1.Secret) string {
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", secret.Name)
		w.write(level0, "Namespace:\t%s\n", secret.Namespace)
		printLabelsMultiline(w, "Labels", secret.Labels)
		printAnnotationsMultiline(w, "Annotations", secret.Annotations)
		w.write(level0, "\nType:\t%s\n", secret.Type)
		w.write(level0, "\nData\n====\n")
		for _, k := range slices.Sorted(maps.Keys(secret.Data)) {
			if k == corev1.ServiceAccountTokenKey && secret.Type == corev1.SecretTypeServiceAccountToken {
				w.write(level0, "%s:\t%s\n", k, string(secret.Data[k]))
				continue
			}
			w.write(level0, "%s:\t%d bytes\n", k, len(secret.Data[k]))
		}
	})
}

// describePriorityClass follows kubectl's describePriorityClass, which
// prints annotations on one line as labels.FormatLabels does and no labels.
func describePriorityClass(s *cluster.State, pc *schedulingv1.PriorityClass) string {
	events := eventQuery{kind: "PriorityClass", name: pc.Name, uids: uidsOf(pc)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", pc.Name)
		w.write(level0, "Value:\t%v\n", pc.Value)
		w.write(level0, "GlobalDefault:\t%v\n", pc.GlobalDefault)
		// The API server defaults the policy; kubectl dereferences it.
		policy := ""
		if pc.PreemptionPolicy != nil {
			policy = string(*pc.PreemptionPolicy)
		}
		w.write(level0, "PreemptionPolicy:\t%s\n", policy)
		w.write(level0, "Description:\t%s\n", pc.Description)
		w.write(level0, "Annotations:\t%s\n", labels.FormatLabels(pc.Annotations))
		describeEvents(s, events, w)
	})
}

// describeCSINode follows kubectl's describeCSINode. kubectl tests the
// drivers and topology keys for nil; an empty list reaches it as nil (the
// API server stores protobuf), so berth tests the length.
func describeCSINode(s *cluster.State, csi *storagev1.CSINode) string {
	events := eventQuery{kind: "CSINode", name: csi.Name, uids: uidsOf(csi)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", csi.Name)
		printLabelsMultiline(w, "Labels", csi.Labels)
		printAnnotationsMultiline(w, "Annotations", csi.Annotations)
		w.write(level0, "CreationTimestamp:\t%s\n", csi.CreationTimestamp.Time.Format(describeTimeFormat))
		w.write(level0, "Spec:\n")
		if len(csi.Spec.Drivers) > 0 {
			w.write(level1, "Drivers:\n")
			for _, d := range csi.Spec.Drivers {
				w.write(level2, "%s:\n", d.Name)
				w.write(level3, "Node ID:\t%s\n", d.NodeID)
				if d.Allocatable != nil && d.Allocatable.Count != nil {
					w.write(level3, "Allocatables:\n")
					w.write(level4, "Count:\t%d\n", *d.Allocatable.Count)
				}
				if len(d.TopologyKeys) > 0 {
					w.write(level3, "Topology Keys:\t%s\n", d.TopologyKeys)
				}
			}
		}
		describeEvents(s, events, w)
	})
}
