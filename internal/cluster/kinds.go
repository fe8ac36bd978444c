package cluster

import (
	"reflect"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	karpv1alpha5 "github.com/berth-sim/berth/internal/karpenter/apis/v1alpha5"
)

// Kind describes one kind of object the state stores: how the API names it
// (the discovery data kubectl resolves names with), and where it lives in
// State. Every layer that handles objects generically (apply, delete,
// admission, get, describe) goes through this one table, so a new kind is
// one entry in Kinds plus its typed map.
type Kind struct {
	GVK schema.GroupVersionKind
	// Resource is the plural resource name ("pods", "deployments").
	Resource string
	// Singular is the singular resource name; empty means the lower-cased
	// kind, as the API server defaults it.
	Singular string
	// ShortNames are discovery's short names ("po", "deploy").
	ShortNames []string
	// Categories are the groups of resources one name expands to ("all"
	// for `kubectl get all`).
	Categories []string
	Namespaced bool
	// Modelled kinds are accepted by apply; the others are stored by berth's
	// own controllers only, until their behaviour is modelled.
	Modelled bool
	// PrinterColumns are a CRD's additionalPrinterColumns: what `get`
	// prints for a kind that has no built-in printer. Empty means the API
	// server's default, an Age column.
	PrinterColumns []PrinterColumn

	get    func(s *State, key string) (runtime.Object, bool)
	put    func(s *State, key string, obj runtime.Object)
	remove func(s *State, key string)
	list   func(s *State) []runtime.Object
	match  func(obj runtime.Object) bool
	ensure func(s *State)
	newObj func() runtime.Object
	// eachUID visits the uid of every stored object, in no particular order.
	eachUID func(s *State, visit func(types.UID))
	each    func(s *State, visit func(metav1.Object))
	length  func(s *State) int
}

// PrinterColumn is one of a CustomResourceDefinition's
// additionalPrinterColumns. Type is an OpenAPI type ("string", "integer",
// "number", "boolean", "date"); Priority 0 columns show by default, higher
// ones with -o wide.
type PrinterColumn struct {
	Name        string
	Type        string
	JSONPath    string
	Priority    int32
	Description string
}

// GroupResource is "deployments.apps", or "pods" for the core group, as API
// error messages print it.
func (k *Kind) GroupResource() string {
	if k.GVK.Group == "" {
		return k.Resource
	}
	return k.Resource + "." + k.GVK.Group
}

// SingularName is the singular resource name ("deployment").
func (k *Kind) SingularName() string {
	if k.Singular != "" {
		return k.Singular
	}
	return strings.ToLower(k.GVK.Kind)
}

// InCategory reports whether the kind belongs to category c.
func (k *Kind) InCategory(c string) bool {
	for _, x := range k.Categories {
		if x == c {
			return true
		}
	}
	return false
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
func (k *Kind) List(s *State) []runtime.Object { return k.list(s) }

// Each visits every stored object of this kind in no particular order, for
// passes whose outcome does not depend on order (no sorting, no list).
func (k *Kind) Each(s *State, visit func(metav1.Object)) { k.each(s, visit) }

// Len is the number of stored objects of this kind.
func (k *Kind) Len(s *State) int { return k.length(s) }

// NewKind completes a kind description with the accessors of its typed map
// in State (field returns a pointer to that map).
func NewKind[T runtime.Object](k Kind, field func(*State) *map[string]T) *Kind {
	k.newObj = func() runtime.Object {
		var zero T
		return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(runtime.Object)
	}
	k.get = func(s *State, key string) (runtime.Object, bool) {
		v, ok := (*field(s))[key]
		if !ok {
			return nil, false
		}
		return v, true
	}
	k.put = func(s *State, key string, obj runtime.Object) {
		m := field(s)
		if *m == nil {
			*m = map[string]T{}
		}
		(*m)[key] = obj.(T)
	}
	k.remove = func(s *State, key string) { delete(*field(s), key) }
	k.list = func(s *State) []runtime.Object {
		m := *field(s)
		var out []runtime.Object
		for _, key := range SortedKeys(m) {
			out = append(out, m[key])
		}
		return out
	}
	k.match = func(obj runtime.Object) bool { _, ok := obj.(T); return ok }
	k.ensure = func(s *State) {
		if m := field(s); *m == nil {
			*m = map[string]T{}
		}
	}
	k.eachUID = func(s *State, visit func(types.UID)) {
		for _, obj := range *field(s) {
			if m, ok := any(obj).(metav1.Object); ok {
				visit(m.GetUID())
			}
		}
	}
	k.each = func(s *State, visit func(metav1.Object)) {
		for _, obj := range *field(s) {
			if m, ok := any(obj).(metav1.Object); ok {
				visit(m)
			}
		}
	}
	k.length = func(s *State) int { return len(*field(s)) }
	return &k
}

func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// all is the category `kubectl get all` expands.
var all = []string{"all"}

// Kinds lists every stored kind. Adding a kind is one entry here (names,
// scope, and for a CRD its printer columns) plus its typed map in State:
// name resolution, delete, get and describe then know it (apply too when
// Modelled), and it prints as kubectl prints a custom resource unless the
// view package has a built-in printer for it. The order is the order the garbage collector and namespace
// deletion walk kinds in, so new kinds go at the end; discovery order (for
// categories such as "all") is computed, see KindList.InCategory.
var Kinds = KindList{
	NewKind(Kind{GVK: gvk("", "v1", "Namespace"), Resource: "namespaces", ShortNames: []string{"ns"}, Modelled: true},
		func(s *State) *map[string]*corev1.Namespace { return &s.Namespaces }),
	NewKind(Kind{GVK: gvk("", "v1", "Node"), Resource: "nodes", ShortNames: []string{"no"}, Modelled: true},
		func(s *State) *map[string]*corev1.Node { return &s.Nodes }),
	NewKind(Kind{GVK: gvk("", "v1", "Pod"), Resource: "pods", ShortNames: []string{"po"}, Categories: all, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*corev1.Pod { return &s.Pods }),
	NewKind(Kind{GVK: gvk("", "v1", "Service"), Resource: "services", ShortNames: []string{"svc"}, Categories: all, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*corev1.Service { return &s.Services }),
	NewKind(Kind{GVK: gvk("", "v1", "ServiceAccount"), Resource: "serviceaccounts", ShortNames: []string{"sa"}, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*corev1.ServiceAccount { return &s.ServiceAccounts }),
	NewKind(Kind{GVK: gvk("", "v1", "ConfigMap"), Resource: "configmaps", ShortNames: []string{"cm"}, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*corev1.ConfigMap { return &s.ConfigMaps }),
	NewKind(Kind{GVK: gvk("", "v1", "Secret"), Resource: "secrets", Namespaced: true, Modelled: true},
		func(s *State) *map[string]*corev1.Secret { return &s.Secrets }),
	NewKind(Kind{GVK: gvk("", "v1", "PersistentVolume"), Resource: "persistentvolumes", ShortNames: []string{"pv"}, Modelled: true},
		func(s *State) *map[string]*corev1.PersistentVolume { return &s.PersistentVolumes }),
	NewKind(Kind{GVK: gvk("", "v1", "PersistentVolumeClaim"), Resource: "persistentvolumeclaims", ShortNames: []string{"pvc"}, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*corev1.PersistentVolumeClaim { return &s.PersistentVolumeClaims }),
	NewKind(Kind{GVK: gvk("scheduling.k8s.io", "v1", "PriorityClass"), Resource: "priorityclasses", ShortNames: []string{"pc"}, Modelled: true},
		func(s *State) *map[string]*schedulingv1.PriorityClass { return &s.PriorityClasses }),
	NewKind(Kind{GVK: gvk("apps", "v1", "Deployment"), Resource: "deployments", ShortNames: []string{"deploy"}, Categories: all, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*appsv1.Deployment { return &s.Deployments }),
	NewKind(Kind{GVK: gvk("apps", "v1", "ReplicaSet"), Resource: "replicasets", ShortNames: []string{"rs"}, Categories: all, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*appsv1.ReplicaSet { return &s.ReplicaSets }),
	NewKind(Kind{GVK: gvk("apps", "v1", "StatefulSet"), Resource: "statefulsets", ShortNames: []string{"sts"}, Categories: all, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*appsv1.StatefulSet { return &s.StatefulSets }),
	NewKind(Kind{GVK: gvk("apps", "v1", "DaemonSet"), Resource: "daemonsets", ShortNames: []string{"ds"}, Categories: all, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*appsv1.DaemonSet { return &s.DaemonSets }),
	NewKind(Kind{GVK: gvk("batch", "v1", "Job"), Resource: "jobs", Categories: all, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*batchv1.Job { return &s.Jobs }),
	NewKind(Kind{GVK: gvk("policy", "v1", "PodDisruptionBudget"), Resource: "poddisruptionbudgets", ShortNames: []string{"pdb"}, Namespaced: true, Modelled: true},
		func(s *State) *map[string]*policyv1.PodDisruptionBudget { return &s.PodDisruptionBudgets }),
	NewKind(Kind{GVK: gvk("storage.k8s.io", "v1", "StorageClass"), Resource: "storageclasses", ShortNames: []string{"sc"}, Modelled: true},
		func(s *State) *map[string]*storagev1.StorageClass { return &s.StorageClasses }),
	NewKind(Kind{GVK: gvk("storage.k8s.io", "v1", "CSINode"), Resource: "csinodes", Modelled: true},
		func(s *State) *map[string]*storagev1.CSINode { return &s.CSINodes }),
	// Karpenter's kinds, with the names and printer columns of the upstream
	// CRDs (aws/karpenter-provider-aws pkg/apis/crds at v1.14.1; v1alpha5 at
	// v0.32.10); see docs/karpenter-apis.md. NodeClaims are Karpenter's own
	// objects, so apply does not take them.
	NewKind(Kind{GVK: gvk("karpenter.sh", "v1", "NodePool"), Resource: "nodepools", Categories: karpenter, Modelled: true,
		PrinterColumns: []PrinterColumn{
			{Name: "NodeClass", Type: "string", JSONPath: ".spec.template.spec.nodeClassRef.name"},
			{Name: "Nodes", Type: "string", JSONPath: ".status.nodes"},
			{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
			{Name: "Weight", Type: "integer", JSONPath: ".spec.weight", Priority: 1},
			{Name: "CPU", Type: "string", JSONPath: ".status.resources.cpu", Priority: 1},
			{Name: "Memory", Type: "string", JSONPath: ".status.resources.memory", Priority: 1},
		}},
		func(s *State) *map[string]*karpv1.NodePool { return &s.NodePools }),
	NewKind(Kind{GVK: gvk("karpenter.sh", "v1", "NodeClaim"), Resource: "nodeclaims", Categories: karpenter,
		PrinterColumns: []PrinterColumn{
			{Name: "Type", Type: "string", JSONPath: `.metadata.labels.node\.kubernetes\.io/instance-type`},
			{Name: "Capacity", Type: "string", JSONPath: `.metadata.labels.karpenter\.sh/capacity-type`},
			{Name: "Zone", Type: "string", JSONPath: `.metadata.labels.topology\.kubernetes\.io/zone`},
			{Name: "Node", Type: "string", JSONPath: ".status.nodeName"},
			{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
			{Name: "ImageID", Type: "string", JSONPath: ".status.imageID", Priority: 1},
			{Name: "ID", Type: "string", JSONPath: ".status.providerID", Priority: 1},
			{Name: "NodePool", Type: "string", JSONPath: `.metadata.labels.karpenter\.sh/nodepool`, Priority: 1},
			{Name: "NodeClass", Type: "string", JSONPath: ".spec.nodeClassRef.name", Priority: 1},
			{Name: "Drifted", Type: "string", JSONPath: `.status.conditions[?(@.type=="Drifted")].status`, Priority: 1},
		}},
		func(s *State) *map[string]*karpv1.NodeClaim { return &s.NodeClaims }),
	NewKind(Kind{GVK: gvk("karpenter.k8s.aws", "v1", "EC2NodeClass"), Resource: "ec2nodeclasses", ShortNames: []string{"ec2nc", "ec2ncs"}, Categories: karpenter, Modelled: true,
		PrinterColumns: []PrinterColumn{
			{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
			{Name: "Role", Type: "string", JSONPath: ".spec.role", Priority: 1},
		}},
		func(s *State) *map[string]*karpv1.EC2NodeClass { return &s.EC2NodeClasses }),
	NewKind(Kind{GVK: gvk("karpenter.sh", "v1alpha5", "Provisioner"), Resource: "provisioners", Categories: karpenter, Modelled: true,
		PrinterColumns: []PrinterColumn{
			{Name: "Template", Type: "string", JSONPath: ".spec.providerRef.name"},
			{Name: "Weight", Type: "string", JSONPath: ".spec.weight", Priority: 1},
		}},
		func(s *State) *map[string]*karpv1alpha5.Provisioner { return &s.Provisioners }),
	// The AWSNodeTemplate CRD has no printer columns: the API server's Age.
	NewKind(Kind{GVK: gvk("karpenter.k8s.aws", "v1alpha1", "AWSNodeTemplate"), Resource: "awsnodetemplates", Categories: karpenter, Modelled: true},
		func(s *State) *map[string]*karpv1alpha5.AWSNodeTemplate { return &s.AWSNodeTemplates }),
	// Fargate profiles are EKS objects that berth serves under its own group
	// (docs/fargate.md#profiles-in-berth-get-and-describe): they come from a
	// ClusterConfig, so apply does not take them; delete removes one as
	// `eksctl delete fargateprofile` does. Their table is view's built-in
	// printer, modelled on eksctl's.
	NewKind(Kind{GVK: FargateProfileGVK, Resource: "fargateprofiles", Categories: fargateCategory},
		func(s *State) *map[string]*FargateProfile { return &s.FargateProfiles }),
	// Node leases are written by the kubelet model only (nodelease.go,
	// docs/node-lifecycle.md), so apply does not take them.
	NewKind(Kind{GVK: gvk("coordination.k8s.io", "v1", "Lease"), Resource: "leases", Namespaced: true},
		func(s *State) *map[string]*coordinationv1.Lease { return &s.Leases }),
	// Service endpoints are written by the EndpointSlice controller and the
	// API server's endpoint reconciler only (docs/services.md), so apply
	// does not take them.
	NewKind(Kind{GVK: gvk("", "v1", "Endpoints"), Resource: "endpoints", Singular: "endpoints", ShortNames: []string{"ep"}, Namespaced: true},
		func(s *State) *map[string]*corev1.Endpoints { return &s.Endpoints }),
	NewKind(Kind{GVK: gvk("discovery.k8s.io", "v1", "EndpointSlice"), Resource: "endpointslices", Namespaced: true},
		func(s *State) *map[string]*discoveryv1.EndpointSlice { return &s.EndpointSlices }),
}

// fargateCategory lets `berth get fargate` list the profiles.
var fargateCategory = []string{"fargate"}

// karpenter is the category every Karpenter CRD is in (`kubectl get karpenter`).
var karpenter = []string{"karpenter"}

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

// EventKind is the kind of recorded events. Events are a log (State.Events)
// rather than a keyed map, and nothing owns or collects them, so they are
// served (get, describe, delete) but kept out of Kinds, which the garbage
// collector and namespace deletion walk.
var EventKind = &Kind{
	GVK: gvk("", "v1", "Event"), Resource: "events", ShortNames: []string{"ev"}, Namespaced: true,
	get: func(s *State, key string) (runtime.Object, bool) {
		for _, e := range s.Events {
			if Key(e.Namespace, e.Name) == key {
				return e, true
			}
		}
		return nil, false
	},
	put: func(s *State, key string, obj runtime.Object) {
		for i, e := range s.Events {
			if Key(e.Namespace, e.Name) == key {
				s.Events[i] = obj.(*corev1.Event)
				return
			}
		}
		s.Events = append(s.Events, obj.(*corev1.Event))
	},
	remove: func(s *State, key string) {
		kept := s.Events[:0]
		for _, e := range s.Events {
			if Key(e.Namespace, e.Name) != key {
				kept = append(kept, e)
			}
		}
		s.Events = kept
	},
	// list orders by namespace then name as the API server lists; the sort
	// is stable so the log order breaks ties.
	list: func(s *State) []runtime.Object {
		events := append([]*corev1.Event(nil), s.Events...)
		sort.SliceStable(events, func(i, j int) bool {
			return Key(events[i].Namespace, events[i].Name) < Key(events[j].Namespace, events[j].Name)
		})
		out := make([]runtime.Object, len(events))
		for i, e := range events {
			out[i] = e
		}
		return out
	},
	match:  func(obj runtime.Object) bool { _, ok := obj.(*corev1.Event); return ok },
	ensure: func(*State) {},
	newObj: func() runtime.Object { return &corev1.Event{} },
	eachUID: func(s *State, visit func(types.UID)) {
		for _, e := range s.Events {
			visit(e.UID)
		}
	},
}
