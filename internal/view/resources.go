package view

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/berth-sim/berth/internal/cluster"
)

// resourceType is one kind `get` and `describe` know: its names, its API
// coordinates, how to list it and how to print one table row.
type resourceType struct {
	plural     string
	aliases    []string
	gvk        schema.GroupVersionKind
	namespaced bool
	columns    []metav1.TableColumnDefinition
	// list returns the objects in namespace ns ("" = all), ordered as the
	// API server returns them (by namespace, then name).
	list func(s *cluster.State, ns string) []runtime.Object
	row  func(s *cluster.State, obj runtime.Object) metav1.TableRow
	// fields returns the field-selector set the API server supports.
	fields func(obj runtime.Object) fields.Set
}

func (r *resourceType) groupResource() string {
	if r.gvk.Group == "" {
		return r.plural
	}
	return r.plural + "." + r.gvk.Group
}

// listMap returns the objects of one state map in key order, keeping those in ns.
func listMap[T runtime.Object](m map[string]T, ns string, namespaceOf func(T) string) []runtime.Object {
	var out []runtime.Object
	for _, k := range cluster.SortedKeys(m) {
		obj := m[k]
		if ns != "" && namespaceOf(obj) != ns {
			continue
		}
		out = append(out, obj)
	}
	return out
}

func metaFields(m metav1.Object, namespaced bool) fields.Set {
	set := fields.Set{"metadata.name": m.GetName()}
	if namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	return set
}

func podFields(obj runtime.Object) fields.Set {
	pod := obj.(*corev1.Pod)
	set := metaFields(pod, true)
	set["spec.nodeName"] = pod.Spec.NodeName
	set["spec.restartPolicy"] = string(pod.Spec.RestartPolicy)
	set["spec.schedulerName"] = pod.Spec.SchedulerName
	set["spec.serviceAccountName"] = pod.Spec.ServiceAccountName
	set["spec.hostNetwork"] = fmt.Sprint(pod.Spec.HostNetwork)
	set["status.phase"] = string(pod.Status.Phase)
	set["status.podIP"] = pod.Status.PodIP
	set["status.nominatedNodeName"] = pod.Status.NominatedNodeName
	return set
}

func eventFields(obj runtime.Object) fields.Set {
	e := obj.(*corev1.Event)
	set := metaFields(e, true)
	set["involvedObject.kind"] = e.InvolvedObject.Kind
	set["involvedObject.namespace"] = e.InvolvedObject.Namespace
	set["involvedObject.name"] = e.InvolvedObject.Name
	set["involvedObject.uid"] = string(e.InvolvedObject.UID)
	set["involvedObject.apiVersion"] = e.InvolvedObject.APIVersion
	set["involvedObject.resourceVersion"] = e.InvolvedObject.ResourceVersion
	set["involvedObject.fieldPath"] = e.InvolvedObject.FieldPath
	set["reason"] = e.Reason
	set["reportingComponent"] = e.ReportingController
	set["source"] = e.Source.Component
	set["type"] = e.Type
	return set
}

func ns[T metav1.Object](o T) string { return o.GetNamespace() }

var (
	podType = &resourceType{
		plural: "pods", aliases: []string{"pod", "po"},
		gvk: corev1.SchemeGroupVersion.WithKind("Pod"), namespaced: true, columns: podColumns,
		list:   func(s *cluster.State, n string) []runtime.Object { return listMap(s.Pods, n, ns[*corev1.Pod]) },
		row:    func(s *cluster.State, o runtime.Object) metav1.TableRow { return podRow(s, o.(*corev1.Pod)) },
		fields: podFields,
	}
	nodeType = &resourceType{
		plural: "nodes", aliases: []string{"node", "no"},
		gvk: corev1.SchemeGroupVersion.WithKind("Node"), columns: nodeColumns,
		list: func(s *cluster.State, _ string) []runtime.Object { return listMap(s.Nodes, "", ns[*corev1.Node]) },
		row:  func(s *cluster.State, o runtime.Object) metav1.TableRow { return nodeRow(s, o.(*corev1.Node)) },
		fields: func(o runtime.Object) fields.Set {
			n := o.(*corev1.Node)
			set := metaFields(n, false)
			set["spec.unschedulable"] = fmt.Sprint(n.Spec.Unschedulable)
			return set
		},
	}
	namespaceType = &resourceType{
		plural: "namespaces", aliases: []string{"namespace", "ns"},
		gvk: corev1.SchemeGroupVersion.WithKind("Namespace"), columns: namespaceColumns,
		list: func(s *cluster.State, _ string) []runtime.Object {
			return listMap(s.Namespaces, "", ns[*corev1.Namespace])
		},
		row: func(s *cluster.State, o runtime.Object) metav1.TableRow {
			return namespaceRow(s, o.(*corev1.Namespace))
		},
		fields: func(o runtime.Object) fields.Set {
			n := o.(*corev1.Namespace)
			set := metaFields(n, false)
			set["status.phase"] = string(n.Status.Phase)
			return set
		},
	}
	deploymentType = &resourceType{
		plural: "deployments", aliases: []string{"deployment", "deploy"},
		gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), namespaced: true, columns: deploymentColumns,
		list: func(s *cluster.State, n string) []runtime.Object {
			return listMap(s.Deployments, n, ns[*appsv1.Deployment])
		},
		row: func(s *cluster.State, o runtime.Object) metav1.TableRow {
			return deploymentRow(s, o.(*appsv1.Deployment))
		},
		fields: func(o runtime.Object) fields.Set { return metaFields(o.(metav1.Object), true) },
	}
	replicaSetType = &resourceType{
		plural: "replicasets", aliases: []string{"replicaset", "rs"},
		gvk: appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), namespaced: true, columns: replicaSetColumns,
		list: func(s *cluster.State, n string) []runtime.Object {
			return listMap(s.ReplicaSets, n, ns[*appsv1.ReplicaSet])
		},
		row: func(s *cluster.State, o runtime.Object) metav1.TableRow {
			return replicaSetRow(s, o.(*appsv1.ReplicaSet))
		},
		fields: func(o runtime.Object) fields.Set { return metaFields(o.(metav1.Object), true) },
	}
	eventType = &resourceType{
		plural: "events", aliases: []string{"event", "ev"},
		gvk: corev1.SchemeGroupVersion.WithKind("Event"), namespaced: true, columns: eventColumns,
		list:   listEvents,
		row:    func(s *cluster.State, o runtime.Object) metav1.TableRow { return eventRow(s, o.(*corev1.Event)) },
		fields: eventFields,
	}
	serviceType = &resourceType{
		plural: "services", aliases: []string{"service", "svc"},
		gvk: corev1.SchemeGroupVersion.WithKind("Service"), namespaced: true, columns: serviceColumns,
		list:   func(s *cluster.State, n string) []runtime.Object { return listMap(s.Services, n, ns[*corev1.Service]) },
		row:    func(s *cluster.State, o runtime.Object) metav1.TableRow { return serviceRow(s, o.(*corev1.Service)) },
		fields: func(o runtime.Object) fields.Set { return metaFields(o.(metav1.Object), true) },
	}
	serviceAccountType = &resourceType{
		plural: "serviceaccounts", aliases: []string{"serviceaccount", "sa"},
		gvk: corev1.SchemeGroupVersion.WithKind("ServiceAccount"), namespaced: true, columns: serviceAccountColumns,
		list: func(s *cluster.State, n string) []runtime.Object {
			return listMap(s.ServiceAccounts, n, ns[*corev1.ServiceAccount])
		},
		row: func(s *cluster.State, o runtime.Object) metav1.TableRow {
			return serviceAccountRow(s, o.(*corev1.ServiceAccount))
		},
		fields: func(o runtime.Object) fields.Set { return metaFields(o.(metav1.Object), true) },
	}
	configMapType = &resourceType{
		plural: "configmaps", aliases: []string{"configmap", "cm"},
		gvk: corev1.SchemeGroupVersion.WithKind("ConfigMap"), namespaced: true, columns: configMapColumns,
		list: func(s *cluster.State, n string) []runtime.Object {
			return listMap(s.ConfigMaps, n, ns[*corev1.ConfigMap])
		},
		row: func(s *cluster.State, o runtime.Object) metav1.TableRow {
			return configMapRow(s, o.(*corev1.ConfigMap))
		},
		fields: func(o runtime.Object) fields.Set { return metaFields(o.(metav1.Object), true) },
	}
	secretType = &resourceType{
		plural: "secrets", aliases: []string{"secret"},
		gvk: corev1.SchemeGroupVersion.WithKind("Secret"), namespaced: true, columns: secretColumns,
		list: func(s *cluster.State, n string) []runtime.Object { return listMap(s.Secrets, n, ns[*corev1.Secret]) },
		row:  func(s *cluster.State, o runtime.Object) metav1.TableRow { return secretRow(s, o.(*corev1.Secret)) },
		fields: func(o runtime.Object) fields.Set {
			sec := o.(*corev1.Secret)
			set := metaFields(sec, true)
			set["type"] = string(sec.Type)
			return set
		},
	}
	priorityClassType = &resourceType{
		plural: "priorityclasses", aliases: []string{"priorityclass", "pc"},
		gvk: schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"), columns: priorityClassColumns,
		list: func(s *cluster.State, _ string) []runtime.Object {
			return listMap(s.PriorityClasses, "", ns[*schedulingv1.PriorityClass])
		},
		row: func(s *cluster.State, o runtime.Object) metav1.TableRow {
			return priorityClassRow(s, o.(*schedulingv1.PriorityClass))
		},
		fields: func(o runtime.Object) fields.Set { return metaFields(o.(metav1.Object), false) },
	}

	resourceTypes = []*resourceType{podType, nodeType, namespaceType, deploymentType, replicaSetType, eventType,
		serviceType, serviceAccountType, configMapType, secretType, priorityClassType,
		persistentVolumeType, persistentVolumeClaimType, storageClassType}

	// allCategory is what `kubectl get all` expands to, in discovery order,
	// limited to the kinds berth stores.
	allCategory = []*resourceType{podType, serviceType, deploymentType, replicaSetType}
)

// listEvents returns events by namespace then name, as the API server lists them.
func listEvents(s *cluster.State, namespace string) []runtime.Object {
	events := make([]*corev1.Event, 0, len(s.Events))
	for _, e := range s.Events {
		if namespace == "" || e.Namespace == namespace {
			events = append(events, e)
		}
	}
	sort.SliceStable(events, func(i, j int) bool {
		return cluster.Key(events[i].Namespace, events[i].Name) < cluster.Key(events[j].Namespace, events[j].Name)
	})
	out := make([]runtime.Object, len(events))
	for i, e := range events {
		out[i] = e
	}
	return out
}

// resolveType maps a user-typed resource name (plural, singular, short
// name, optionally with its group) to a resourceType.
func resolveType(name string) (*resourceType, error) {
	n := strings.ToLower(name)
	for _, r := range resourceTypes {
		if n == r.plural || n == r.groupResource() || containsString(r.aliases, n) {
			return r, nil
		}
		if r.gvk.Group != "" && strings.HasSuffix(n, "."+r.gvk.Group) {
			base := strings.TrimSuffix(n, "."+r.gvk.Group)
			if base == r.plural || containsString(r.aliases, base) {
				return r, nil
			}
		}
	}
	return nil, fmt.Errorf("error: the server doesn't have a resource type %q", name)
}

// lookup finds one named object.
func (r *resourceType) lookup(s *cluster.State, namespace, name string) (runtime.Object, bool) {
	if !r.namespaced {
		namespace = ""
	}
	for _, obj := range r.list(s, namespace) {
		if m, err := metaAccessor(obj); err == nil && m.GetName() == name {
			return obj, true
		}
	}
	return nil, false
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no object metadata", obj)
	}
	return m, nil
}

// notFound is the API server's NotFound error as kubectl prints it.
func notFound(r *resourceType, name string) error {
	return fmt.Errorf("Error from server (NotFound): %s %q not found", r.groupResource(), name)
}

// zero returns an empty object of this type (for checking which fields a
// field selector may name).
func (r *resourceType) zero() runtime.Object {
	obj, err := clientgoscheme.Scheme.New(r.gvk)
	if err != nil {
		panic(fmt.Sprintf("view: no Go type for %s: %v", r.gvk, err))
	}
	return obj
}
