package store

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestEncodeIsTheStorageEnvelope: the value is what the API server's
// protobuf serializer writes to etcd: "k8s\x00" and a runtime.Unknown.
func TestEncodeIsTheStorageEnvelope(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	raw, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "Pod"}, Raw: raw}
	want, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want = append([]byte("k8s\x00"), want...)
	got, err := Encode(pod, gvk)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode:\n%q\nwant\n%q", got, want)
	}
	var back corev1.Pod
	if err := Decode(got, &back, gvk); err != nil || back.Spec.NodeName != "n1" || back.Labels["app"] != "web" {
		t.Fatalf("Decode: %v %+v", err, back)
	}
	if err := Decode(got, &corev1.Node{}, schema.GroupVersionKind{Version: "v1", Kind: "Node"}); err == nil {
		t.Error("a pod decoded as a node")
	}
	if name, ok := Field(got, 1, 1); !ok || string(name) != "web" {
		t.Errorf("Field(metadata.name) = %q %v", name, ok)
	}
	if _, ok := Field(got[:len(got)-9], 2, 99); ok {
		t.Error("Field found a missing field")
	}
}
