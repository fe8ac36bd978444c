package view

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/cluster"
)

// kinds is what get, describe, rollout and delete resolve resource names
// against: the kinds the API serves. It is a variable so that tests can
// serve extra kinds. Node groups are served read-only, computed from the
// state (docs/cluster-autoscaler.md#node-group-views).
var kinds = append(cluster.ServedKinds()[:len(cluster.ServedKinds()):len(cluster.ServedKinds())], controller.NodeGroupKind)

// resolveKind maps a user-typed resource name (plural, singular, short
// name, optionally with its group) to a kind, with kubectl's error.
func resolveKind(name string) (*cluster.Kind, error) {
	if k := kinds.ForResource(name); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("error: the server doesn't have a resource type %q", name)
}

// listKind returns the objects of kind k in namespace ns ("" = all), ordered
// as the API server returns them (by namespace, then name).
func listKind(s *cluster.State, k *cluster.Kind, ns string) []runtime.Object {
	objs := k.List(s)
	if ns == "" {
		return objs
	}
	var out []runtime.Object
	for _, obj := range objs {
		if m, err := metaAccessor(obj); err == nil && m.GetNamespace() == ns {
			out = append(out, obj)
		}
	}
	return out
}

// lookup finds one named object by its key (not by listing the kind: a
// describe of one event in a long log stays cheap).
func lookup(s *cluster.State, k *cluster.Kind, namespace, name string) (runtime.Object, bool) {
	if !k.Namespaced {
		namespace = ""
	}
	return k.Get(s, cluster.Key(namespace, name))
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no object metadata", obj)
	}
	return m, nil
}

// notFound is the API server's NotFound error as kubectl prints it.
func notFound(k *cluster.Kind, name string) error {
	return fmt.Errorf("Error from server (NotFound): %s %q not found", k.GroupResource(), name)
}

// fieldSet returns the field-selector set the API server supports for obj:
// the kind's own fields where it has them, else the metadata fields every
// resource (custom ones included) supports.
func fieldSet(k *cluster.Kind, obj runtime.Object) fields.Set {
	if b, ok := builtins[k.GVK.GroupKind()]; ok && b.fields != nil {
		return b.fields(obj)
	}
	return metaFields(obj.(metav1.Object), k.Namespaced)
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

func nodeFields(o runtime.Object) fields.Set {
	n := o.(*corev1.Node)
	set := metaFields(n, false)
	set["spec.unschedulable"] = fmt.Sprint(n.Spec.Unschedulable)
	return set
}

func namespaceFields(o runtime.Object) fields.Set {
	n := o.(*corev1.Namespace)
	set := metaFields(n, false)
	set["status.phase"] = string(n.Status.Phase)
	return set
}

func secretFields(o runtime.Object) fields.Set {
	sec := o.(*corev1.Secret)
	set := metaFields(sec, true)
	set["type"] = string(sec.Type)
	return set
}
