package controller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

// StatusConfigMap is the default name of cluster-autoscaler's status ConfigMap.
const StatusConfigMap = "cluster-autoscaler-status"

// statusConfigMap returns the status ConfigMap, creating it empty.
func statusConfigMap(s *cluster.State) *corev1.ConfigMap {
	ns, name := metav1.NamespaceSystem, StatusConfigMap
	if o, ok, err := Options(s); ok && err == nil {
		ns, name = o.Namespace, o.StatusConfigMapName
	}
	key := cluster.Key(ns, name)
	if cm := s.ConfigMaps[key]; cm != nil {
		return cm
	}
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(s.NewUID()),
			CreationTimestamp: metav1.NewTime(s.Now), ResourceVersion: s.Bump(),
			Annotations: map[string]string{}},
		Data: map[string]string{},
	}
	s.NoteCreated(cm.UID)
	s.ConfigMaps[key] = cm
	return cm
}

// regardingStatus is the reference cluster-autoscaler's log events point at.
func regardingStatus(s *cluster.State) corev1.ObjectReference {
	return cluster.Regarding("ConfigMap", "v1", statusConfigMap(s))
}
