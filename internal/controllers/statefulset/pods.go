package statefulset

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// Pod identity labels (apps/v1).
const (
	PodNameLabel      = appsv1.StatefulSetPodNameLabel // "statefulset.kubernetes.io/pod-name"
	PodIndexLabel     = appsv1.PodIndexLabel           // "apps.kubernetes.io/pod-index"
	RevisionHashLabel = appsv1.ControllerRevisionHashLabelKey
)

var ordinalName = regexp.MustCompile(`^(.*)-([0-9]+)$`)

// ordinalOf returns the ordinal encoded in a pod's name, or -1.
func ordinalOf(set *appsv1.StatefulSet, pod *corev1.Pod) int {
	m := ordinalName.FindStringSubmatch(pod.Name)
	if m == nil || m[1] != set.Name {
		return -1
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return -1
	}
	return n
}

// PodName is getPodName: "<set>-<ordinal>".
func PodName(set *appsv1.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", set.Name, ordinal)
}

// ClaimName is getPersistentVolumeClaimName: "<template>-<set>-<ordinal>".
func ClaimName(set *appsv1.StatefulSet, template string, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", template, set.Name, ordinal)
}

// RevisionName is the name of the set's ControllerRevision for its current
// template: "<set>-<hash>", where the hash is HashControllerRevision of the
// revision's data — the strategic-merge patch {"spec":{"template":{...,
// "$patch":"replace"}}} with keys sorted — and the collision count, fnv32a,
// the decimal sum encoded with the generateName alphabet. berth builds the
// patch from the defaulted template it stores, so the hash is stable and
// changes exactly when the template does, but need not equal a real
// cluster's byte for byte.
func RevisionName(set *appsv1.StatefulSet) string {
	raw, _ := json.Marshal(set.Spec.Template)
	var tmpl map[string]interface{}
	_ = json.Unmarshal(raw, &tmpl)
	tmpl["$patch"] = "replace"
	patch, _ := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"template": tmpl}})
	h := fnv.New32a()
	h.Write(patch)
	var collisions int32 // the controller always hashes a count, 0 when unset
	if set.Status.CollisionCount != nil {
		collisions = *set.Status.CollisionCount
	}
	h.Write([]byte(strconv.FormatInt(int64(collisions), 10)))
	return set.Name + "-" + rand.SafeEncodeString(strconv.FormatInt(int64(h.Sum32()), 10))
}

// newPod builds pod <set>-<ordinal> from template t at revision: identity
// labels, hostname and subdomain, and a claim volume per claim template.
func newPod(set *appsv1.StatefulSet, t *corev1.PodTemplateSpec, ordinal int, revision string) *corev1.Pod {
	t = t.DeepCopy()
	name := PodName(set, ordinal)
	lbls := map[string]string{}
	for k, v := range t.Labels {
		lbls[k] = v
	}
	lbls[PodNameLabel] = name
	lbls[PodIndexLabel] = strconv.Itoa(ordinal)
	lbls[RevisionHashLabel] = revision
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       set.Namespace,
			Labels:          lbls,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{controllerutil.NewControllerRef(set, "apps/v1", "StatefulSet")},
		},
		Spec: t.Spec,
	}
	pod.Spec.Hostname = name
	pod.Spec.Subdomain = set.Spec.ServiceName
	for _, ct := range set.Spec.VolumeClaimTemplates {
		vol := corev1.Volume{Name: ct.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: ClaimName(set, ct.Name, ordinal)}}}
		replaced := false
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == ct.Name {
				pod.Spec.Volumes[i] = vol
				replaced = true
			}
		}
		if !replaced {
			pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
		}
	}
	return pod
}

// templateFromPod recovers the pod template of an existing pod of the set
// (berth keeps no ControllerRevision objects, so a pod of the current
// revision is the record of that revision's template).
func templateFromPod(pod *corev1.Pod) *corev1.PodTemplateSpec {
	t := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}, Annotations: pod.Annotations}, Spec: *pod.Spec.DeepCopy()}
	for k, v := range pod.Labels {
		switch k {
		case PodNameLabel, PodIndexLabel, RevisionHashLabel:
		default:
			t.Labels[k] = v
		}
	}
	t.Spec.NodeName = ""
	return t
}

// newClaims are the claims pod <ordinal> needs (getPersistentVolumeClaims):
// each template named "<template>-<set>-<ordinal>", labelled with the set's
// selector labels, with owner references per the retention policy.
func newClaims(set *appsv1.StatefulSet, ordinal int) []*corev1.PersistentVolumeClaim {
	var out []*corev1.PersistentVolumeClaim
	for i := range set.Spec.VolumeClaimTemplates {
		c := set.Spec.VolumeClaimTemplates[i].DeepCopy()
		c.Name = ClaimName(set, c.Name, ordinal)
		c.Namespace = set.Namespace
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		if set.Spec.Selector != nil {
			for k, v := range set.Spec.Selector.MatchLabels {
				c.Labels[k] = v
			}
		}
		if p := set.Spec.PersistentVolumeClaimRetentionPolicy; p != nil && p.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
			c.OwnerReferences = append(c.OwnerReferences, setOwnerRef(set))
		}
		c.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
		out = append(out, c)
	}
	return out
}

// setOwnerRef is the claim's reference to the set under whenDeleted: Delete.
func setOwnerRef(set *appsv1.StatefulSet) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: set.Name, UID: set.UID}
}

// isRunningAndReady is the controller's health test for ordering.
func isRunningAndReady(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && controllerutil.IsPodReady(pod)
}
