package app

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/eksctl"
	"github.com/berth-sim/berth/internal/view"
)

// DeleteRequest is `berth delete`.
type DeleteRequest struct {
	Args      []string
	Namespace string
	Files     []string
	Kustomize string
	Selector  string
	All       bool
	// GracePeriod is kubectl delete's --grace-period (nil or -1: the pod's
	// own); Force is --force (docs/node-lifecycle.md#graceful-termination).
	GracePeriod *int
	Force       bool
}

// Warning kubectl prints for --force --grace-period=0.
const forceDeleteWarning = "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely."

// gracePeriod applies kubectl delete's flag rules: --grace-period=0
// without --force means 1, --force alone means 0, and --force with a
// positive period is refused. It returns nil for "the pod's own".
func (r DeleteRequest) gracePeriod() (*int64, error) {
	g := -1
	if r.GracePeriod != nil {
		g = *r.GracePeriod
	}
	if g == 0 && !r.Force {
		g = 1
	}
	if r.Force && g < 0 {
		g = 0
	}
	if r.Force && g > 0 {
		return nil, fmt.Errorf("--force and --grace-period greater than 0 cannot be specified together")
	}
	if g < 0 {
		return nil, nil
	}
	v := int64(g)
	return &v, nil
}

// target is one object to delete.
type target struct {
	res  view.Resource
	obj  runtime.Object
	meta metav1.Object
	// source is the manifest that named it, for delete -f.
	source string
}

// errPrefix starts an API server refusal: the manifest's place, or kubectl's
// "Error from server" for a target named on the command line.
func (t target) errPrefix() string {
	if t.source != "" {
		return t.source + ": "
	}
	return "Error from server (Forbidden): "
}

// immortalNamespaces are kube-apiserver's system namespaces, which the
// NamespaceLifecycle admission plugin refuses to delete.
var immortalNamespaces = map[string]bool{
	metav1.NamespaceDefault: true, metav1.NamespaceSystem: true,
	metav1.NamespacePublic: true, corev1.NamespaceNodeLease: true,
}

// Delete removes objects with background cascading (owned ReplicaSets and
// pods go too, as the garbage collector would), then settles the cluster.
func (a *App) Delete(r DeleteRequest) (err error) {
	defer a.finish(&err)
	grace, err := r.gracePeriod()
	if err != nil {
		return err
	}
	targets, err := a.deleteTargets(r)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		fmt.Fprintln(a.opts.Out, "No resources found")
		return nil
	}
	for _, t := range targets {
		if t.res.GVK().GroupKind() == controller.NodeGroupGVK.GroupKind() {
			// Node groups are views of the ClusterConfig's groups
			// (docs/cluster-autoscaler.md#node-group-views).
			return fmt.Errorf("%snode group %q: deleting a node group is not modelled yet; node groups come from the ClusterConfig (run `berth reset` to recreate the cluster)", t.errPrefix(), t.meta.GetName())
		}
		if t.res.GVK().Kind == "Namespace" && immortalNamespaces[t.meta.GetName()] {
			// kubectl deletes the others and reports this one; berth's
			// commands change nothing when any part fails.
			return fmt.Errorf("%snamespaces %q is forbidden: this namespace may not be deleted", t.errPrefix(), t.meta.GetName())
		}
	}
	work := a.change()
	o := &output{}
	verb := "deleted"
	if grace != nil && *grace == 0 {
		o.errf("%s", forceDeleteWarning)
		verb = "force deleted"
	}
	for _, t := range targets {
		deleteObject(work, t.res.GVK().Kind, t.meta.GetNamespace(), t.meta.GetName(), grace)
		gk := t.res.GVK()
		kind := strings.ToLower(gk.Kind)
		if gk.Group != "" {
			kind += "." + gk.Group
		}
		o.out("%s %q %s", kind, t.meta.GetName(), verb)
	}
	return a.commit(work, o)
}

func (a *App) deleteTargets(r DeleteRequest) ([]target, error) {
	if len(r.Files) > 0 || r.Kustomize != "" {
		objs, err := a.load(r.Files, r.Kustomize)
		if err != nil {
			return nil, err
		}
		var out []target
		for _, o := range objs {
			if _, ok := o.Object.(*eksctl.ClusterConfig); ok {
				return nil, fmt.Errorf("%s: deleting a ClusterConfig is not modelled; use `berth reset`", o.Source)
			}
			res, err := view.LookupResource(strings.ToLower(o.GVK.Kind))
			if err != nil {
				return nil, err
			}
			m := o.Object.(metav1.Object)
			ns := m.GetNamespace()
			if ns == "" {
				ns = a.namespaceOr(r.Namespace)
			}
			found, err := res.Select(a.state, ns, []string{m.GetName()}, "")
			if err != nil {
				return nil, err
			}
			t := newTarget(res, found[0])
			t.source = o.Source.String()
			out = append(out, t)
		}
		return out, nil
	}
	if len(r.Args) == 0 {
		return nil, fmt.Errorf("You must provide one or more resources by argument or filename.")
	}
	var out []target
	ns := a.namespaceOr(r.Namespace)
	if _, _, ok := splitTypeName(r.Args[0]); ok {
		for _, arg := range r.Args {
			typ, name, ok := splitTypeName(arg)
			if !ok {
				return nil, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form")
			}
			res, err := view.LookupResource(typ)
			if err != nil {
				return nil, err
			}
			found, err := res.Select(a.state, ns, []string{name}, "")
			if err != nil {
				return nil, err
			}
			out = append(out, newTarget(res, found[0]))
		}
		return out, nil
	}
	names := r.Args[1:]
	if len(names) == 0 && r.Selector == "" && !r.All {
		return nil, fmt.Errorf("resource(s) were provided, but no name was specified")
	}
	for _, typ := range strings.Split(r.Args[0], ",") {
		res, err := view.LookupResource(typ)
		if err != nil {
			return nil, err
		}
		found, err := res.Select(a.state, ns, names, r.Selector)
		if err != nil {
			return nil, err
		}
		for _, obj := range found {
			out = append(out, newTarget(res, obj))
		}
	}
	return out, nil
}

func newTarget(res view.Resource, obj runtime.Object) target {
	return target{res: res, obj: obj, meta: obj.(metav1.Object)}
}

// deleteObject removes one object. What it owns goes with it through the
// garbage collector when the cluster settles (background cascading). A pod
// is deleted gracefully: it is Terminating until its kubelet has stopped it.
// A node object goes at once; the pods bound to it stay until the pod GC
// collects them as orphans (docs/node-lifecycle.md#pods-on-lost-nodes).
func deleteObject(s *cluster.State, kind, namespace, name string, grace *int64) {
	key := cluster.Key(namespace, name)
	switch kind {
	case "Pod":
		if p, ok := s.Pods[key]; ok {
			s.GracefulDeletePod(p, grace)
		}
	case "Node":
		if n, ok := s.Nodes[key]; ok && s.MarkDeleting(n) {
			// Karpenter's finalizer: its termination controller drains the node.
		} else if ok {
			s.RemoveNodeObject(name)
		}
	case "Namespace":
		deleteNamespace(s, name)
	case cluster.FargateProfileGVK.Kind:
		deleteFargateProfile(s, name)
	case "Event":
		kept := s.Events[:0]
		for _, e := range s.Events {
			if e.Namespace != namespace || e.Name != name {
				kept = append(kept, e)
			}
		}
		s.Events = kept
	default:
		for _, k := range cluster.Kinds {
			if k.GVK.Kind != kind {
				continue
			}
			obj, ok := k.Get(s, key)
			if ok && s.MarkDeleting(obj.(metav1.Object)) {
				continue // Karpenter's finalizer holds it
			}
			k.Remove(s, key)
			if ok {
				s.ObjectDeleted(obj) // PVCs, PVs, StorageClasses, CSINodes
			}
		}
	}
	s.Bump()
}

// deleteNamespace removes the namespace and everything in it.
func deleteNamespace(s *cluster.State, ns string) {
	if _, ok := s.Namespaces[ns]; !ok {
		return
	}
	for _, k := range cluster.Kinds {
		if !k.Namespaced {
			continue
		}
		for _, obj := range k.List(s) {
			if m := obj.(metav1.Object); m.GetNamespace() == ns {
				k.Remove(s, cluster.Key(ns, m.GetName()))
			}
		}
	}
	kept := s.Events[:0]
	for _, e := range s.Events {
		if e.Namespace != ns {
			kept = append(kept, e)
		}
	}
	s.Events = kept
	delete(s.Namespaces, ns)
}
