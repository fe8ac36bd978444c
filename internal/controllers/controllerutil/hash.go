package controllerutil

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/davecgh/go-spew/spew"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/rand"
)

// ComputeHash is upstream's controller.ComputeHash, shared by the Deployment
// (pod-template-hash) and DaemonSet (controller-revision-hash) controllers:
// fnv32a over a deep spew print of the template (plus the collision count),
// the decimal of the sum encoded with the generateName alphabet.
func ComputeHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	hasher := fnv.New32a()
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	printer.Fprintf(hasher, "%#v", *template)
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		hasher.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(hasher.Sum32()))
}

// EqualIgnoreHash compares two templates ignoring the pod-template-hash
// label: how a Deployment finds its new ReplicaSet (the controller and
// `kubectl describe` must agree on it).
//
// The labels are compared apart and the rest on shallow copies without
// them, rather than on deep copies with the label deleted: every
// Deployment sync compares its template with each of its ReplicaSets'
// (docs/simulation-speed.md#pod-creation-session-24). Semantic equality
// takes a nil map for an empty one, as the label-less copies had it.
func EqualIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	if !labelsEqualIgnoringHash(a.Labels, b.Labels) {
		return false
	}
	ac, bc := *a, *b
	ac.Labels, bc.Labels = nil, nil
	return apiequality.Semantic.DeepEqual(&ac, &bc)
}

// labelsEqualIgnoringHash compares two label maps without their
// pod-template-hash label.
func labelsEqualIgnoringHash(a, b map[string]string) bool {
	n := 0
	for k, v := range a {
		if k == appsv1.DefaultDeploymentUniqueLabelKey {
			continue
		}
		if w, ok := b[k]; !ok || w != v {
			return false
		}
		n++
	}
	if _, ok := b[appsv1.DefaultDeploymentUniqueLabelKey]; ok {
		n++
	}
	return n == len(b)
}
