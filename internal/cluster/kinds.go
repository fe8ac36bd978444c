package cluster

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"reflect"
)

// Kind describes one kind of object the state stores: how the API names it
// and where it lives in State. Every layer that handles objects generically
// (apply, delete, admission, views) goes through this one table, so a new
// kind is one entry here plus its typed map.
type Kind struct {
	GVK schema.GroupVersionKind
	// Resource is the plural resource name ("pods", "deployments").
	Resource   string
	Namespaced bool
	// Modelled kinds are accepted by apply; the others are stored by berth's
	// own controllers only, until their behaviour is modelled.
	Modelled bool

	get    func(s *State, key string) (runtime.Object, bool)
	put    func(s *State, key string, obj runtime.Object)
	remove func(s *State, key string)
	keys   func(s *State) []string
	match  func(obj runtime.Object) bool
	ensure func(s *State)
	newObj func() runtime.Object
	// eachUID visits the uid of every stored object, in no particular order.
	eachUID func(s *State, visit func(types.UID))
}

// GroupResource is "deployments.apps", or "pods" for the core group, as API
// error messages print it.
func (k *Kind) GroupResource() string {
	if k.GVK.Group == "" {
		return k.Resource
	}
	return k.Resource + "." + k.GVK.Group
}

// New returns an empty object of this kind.
func (k *Kind) New() runtime.Object { return k.newObj() }

// Get returns the stored object under key.
func (k *Kind) Get(s *State, key string) (runtime.Object, bool) { return k.get(s, key) }

// Put stores obj under key (the object must be of this kind).
func (k *Kind) Put(s *State, key string, obj runtime.Object) { k.put(s, key, obj) }

// Remove deletes the object under key.
func (k *Kind) Remove(s *State, key string) { k.remove(s, key) }

// List returns every stored object of this kind in key order.
func (k *Kind) List(s *State) []runtime.Object {
	var out []runtime.Object
	for _, key := range k.keys(s) {
		obj, _ := k.get(s, key)
		out = append(out, obj)
	}
	return out
}

// modelled and stored mark whether apply accepts a kind.
const (
	modelled = true
	stored   = false
)

func kind[T runtime.Object](group, version, name, resource string, namespaced, applies bool, field func(*State) *map[string]T) *Kind {
	return &Kind{
		GVK:        schema.GroupVersionKind{Group: group, Version: version, Kind: name},
		Resource:   resource,
		Namespaced: namespaced,
		Modelled:   applies,
		newObj: func() runtime.Object {
			var zero T
			return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(runtime.Object)
		},
		get: func(s *State, key string) (runtime.Object, bool) {
			v, ok := (*field(s))[key]
			if !ok {
				return nil, false
			}
			return v, true
		},
		put: func(s *State, key string, obj runtime.Object) {
			m := field(s)
			if *m == nil {
				*m = map[string]T{}
			}
			(*m)[key] = obj.(T)
		},
		remove: func(s *State, key string) { delete(*field(s), key) },
		keys: func(s *State) []string {
			return SortedKeys(*field(s))
		},
		match: func(obj runtime.Object) bool { _, ok := obj.(T); return ok },
		ensure: func(s *State) {
			if m := field(s); *m == nil {
				*m = map[string]T{}
			}
		},
		eachUID: func(s *State, visit func(types.UID)) {
			for _, obj := range *field(s) {
				if m, ok := any(obj).(metav1.Object); ok {
					visit(m.GetUID())
				}
			}
		},
	}
}

// Kinds lists every stored kind.
var Kinds = []*Kind{
	kind("", "v1", "Namespace", "namespaces", false, modelled, func(s *State) *map[string]*corev1.Namespace { return &s.Namespaces }),
	kind("", "v1", "Node", "nodes", false, modelled, func(s *State) *map[string]*corev1.Node { return &s.Nodes }),
	kind("", "v1", "Pod", "pods", true, modelled, func(s *State) *map[string]*corev1.Pod { return &s.Pods }),
	kind("", "v1", "Service", "services", true, modelled, func(s *State) *map[string]*corev1.Service { return &s.Services }),
	kind("", "v1", "ServiceAccount", "serviceaccounts", true, modelled, func(s *State) *map[string]*corev1.ServiceAccount { return &s.ServiceAccounts }),
	kind("", "v1", "ConfigMap", "configmaps", true, modelled, func(s *State) *map[string]*corev1.ConfigMap { return &s.ConfigMaps }),
	kind("", "v1", "Secret", "secrets", true, modelled, func(s *State) *map[string]*corev1.Secret { return &s.Secrets }),
	kind("", "v1", "PersistentVolume", "persistentvolumes", false, modelled, func(s *State) *map[string]*corev1.PersistentVolume { return &s.PersistentVolumes }),
	kind("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true, modelled, func(s *State) *map[string]*corev1.PersistentVolumeClaim { return &s.PersistentVolumeClaims }),
	kind("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", false, modelled, func(s *State) *map[string]*schedulingv1.PriorityClass { return &s.PriorityClasses }),
	kind("apps", "v1", "Deployment", "deployments", true, modelled, func(s *State) *map[string]*appsv1.Deployment { return &s.Deployments }),
	kind("apps", "v1", "ReplicaSet", "replicasets", true, modelled, func(s *State) *map[string]*appsv1.ReplicaSet { return &s.ReplicaSets }),
	kind("apps", "v1", "StatefulSet", "statefulsets", true, modelled, func(s *State) *map[string]*appsv1.StatefulSet { return &s.StatefulSets }),
	kind("apps", "v1", "DaemonSet", "daemonsets", true, modelled, func(s *State) *map[string]*appsv1.DaemonSet { return &s.DaemonSets }),
	kind("batch", "v1", "Job", "jobs", true, modelled, func(s *State) *map[string]*batchv1.Job { return &s.Jobs }),
	kind("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true, modelled, func(s *State) *map[string]*policyv1.PodDisruptionBudget { return &s.PodDisruptionBudgets }),
	kind("storage.k8s.io", "v1", "StorageClass", "storageclasses", false, modelled, func(s *State) *map[string]*storagev1.StorageClass { return &s.StorageClasses }),
	kind("storage.k8s.io", "v1", "CSINode", "csinodes", false, modelled, func(s *State) *map[string]*storagev1.CSINode { return &s.CSINodes }),
}

// KindOf returns the Kind of a stored object type, or nil.
func KindOf(obj runtime.Object) *Kind {
	for _, k := range Kinds {
		if k.match(obj) {
			return k
		}
	}
	return nil
}

// KindFor returns the Kind for a group and kind name, or nil.
func KindFor(gk schema.GroupKind) *Kind {
	for _, k := range Kinds {
		if k.GVK.GroupKind() == gk {
			return k
		}
	}
	return nil
}
