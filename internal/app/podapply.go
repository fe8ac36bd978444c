package app

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// mergePodApply is what `kubectl apply` sends for a pod that exists: a
// three-way strategic merge patch between the last applied manifest, the new
// one and the live pod, applied to the live pod. Fields the manifests never
// mention (nodeName, the service-account token volume, priority, default
// tolerations) keep their live values, so an image change is an image
// change and nothing else. modified is the new manifest as JSON with its
// last-applied annotation.
func mergePodApply(live *corev1.Pod, modified []byte) (*corev1.Pod, error) {
	current, err := json.Marshal(live)
	if err != nil {
		return nil, err
	}
	var original []byte
	if last := live.Annotations[LastAppliedAnnotation]; last != "" {
		original = []byte(last)
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(&corev1.Pod{})
	if err != nil {
		return nil, err
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
	if err != nil {
		return nil, fmt.Errorf("creating patch: %v", err)
	}
	merged, err := strategicpatch.StrategicMergePatch(current, patch, &corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("applying patch: %v", err)
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, err
	}
	return out, nil
}

// withLastApplied is the manifest document as JSON with the last-applied
// annotation set, as kubectl sends it.
func withLastApplied(applied string) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(applied), &doc); err != nil {
		return nil, err
	}
	meta, _ := doc["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		doc["metadata"] = meta
	}
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[LastAppliedAnnotation] = applied
	return json.Marshal(doc)
}
