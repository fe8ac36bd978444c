package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/examples"
	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/eksctl"
	"github.com/berth-sim/berth/internal/manifest"
	"github.com/berth-sim/berth/internal/parallel"
	"github.com/berth-sim/berth/internal/version"
)

// LastAppliedAnnotation is where kubectl apply keeps the manifest it applied;
// an identical manifest next time is "unchanged".
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// ApplyRequest is `berth apply`.
type ApplyRequest struct {
	Files     []string
	Kustomize string
	// Namespace (-n) is where objects without a namespace go; objects naming
	// another namespace are refused, as kubectl does.
	Namespace string
}

// Apply decodes and validates every manifest, applies them all to a copy of
// the cluster, runs the cluster until it settles and only then replaces and
// saves the state: a failure anywhere changes nothing.
func (a *App) Apply(req ApplyRequest) (err error) {
	defer a.finish(&err)
	objs, err := a.decode(req.Files, req.Kustomize)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return fmt.Errorf("no objects passed to apply") // kubectl's text
	}
	if err := validateForApply(objs); err != nil {
		return err
	}
	work := a.change()
	if a.fresh {
		if err := a.prepareNew(work, objs); err != nil {
			return err
		}
	}
	if err := setNamespaces(objs, req.Namespace); err != nil {
		return err
	}
	// What each object needs before it meets the cluster (its last-applied
	// annotation, the request-size and annotation checks) depends on the
	// object alone: done on all CPUs first, then applied in order, which
	// reports the same first error as doing both one object at a time.
	prepared := make([]preparedObject, len(objs))
	parallel.For(len(objs), parallelFrom, func(i int) { prepared[i] = prepare(objs[i]) })
	var lines []string
	for i, o := range objs {
		line, err := applyPrepared(work, o, prepared[i])
		if err != nil {
			var named noSourcePrefix
			if _, ok := o.Object.(*eksctl.ClusterConfig); ok || errors.As(err, &named) {
				return err // node-group and validation errors already name their source
			}
			return fmt.Errorf("%s: %w", o.Source, err)
		}
		lines = append(lines, line)
	}
	return a.commit(work, stdout(lines))
}

func (a *App) load(files []string, kustomizeDir string) ([]manifest.Object, error) {
	objs, err := a.decode(files, kustomizeDir)
	if err != nil {
		return nil, err
	}
	if err := manifest.ValidateAll(objs); err != nil {
		return nil, err
	}
	return objs, nil
}

func (a *App) decode(files []string, kustomizeDir string) ([]manifest.Object, error) {
	if kustomizeDir != "" {
		return manifest.LoadKustomize(kustomizeDir)
	}
	return manifest.Load(files, a.opts.In)
}

// validateForApply validates every object, in order, as ValidateAll does,
// except that an object with only generateName never reaches the API
// server: kubectl apply refuses it first, naming the prefix.
func validateForApply(objs []manifest.Object) error {
	errs := make([]error, len(objs))
	parallel.For(len(objs), parallelFrom, func(i int) { errs[i] = validateOneForApply(objs[i]) })
	return errors.Join(errs...)
}

func validateOneForApply(o manifest.Object) error {
	if m, ok := o.Object.(metav1.Object); ok && m.GetName() == "" && m.GetGenerateName() != "" {
		return fmt.Errorf("%s: from %s: cannot use generate name with apply", o.Source, m.GetGenerateName())
	}
	if err := manifest.Validate(o); err != nil {
		return err
	}
	return checkAutoscalerFlags(o)
}

// parallelFrom is the number of objects from which the per-object work of
// apply is spread over the CPUs.
const parallelFrom = 64

// setNamespaces gives namespaced objects without a namespace the command's
// namespace (default "default") and refuses objects that name another one
// when -n was given, with kubectl's message.
func setNamespaces(objs []manifest.Object, flag string) error {
	ns := flag
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	for _, o := range objs {
		k := cluster.KindOf(o.Object)
		if k == nil || !k.Namespaced {
			continue
		}
		m := o.Object.(metav1.Object)
		switch {
		case m.GetNamespace() == "":
			m.SetNamespace(ns)
		case flag != "" && m.GetNamespace() != flag:
			return fmt.Errorf("%s: the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.",
				o.Source, m.GetNamespace(), flag, m.GetNamespace())
		}
	}
	return nil
}

// prepareNew sets up a brand-new cluster: its Kubernetes version (the flag,
// else the ClusterConfig's, else the default), the VPC (the service CIDR of
// the built-in objects depends on it), the built-in namespaces and, when the
// manifests define no nodes at all, the bundled example cluster. Node
// manifests without a ClusterConfig leave region, zones and VPC unset: the
// nodes' own labels and addresses are all there is (docs/pod-networking.md).
func (a *App) prepareNew(s *cluster.State, objs []manifest.Object) error {
	var def []manifest.Object
	if !definesNodes(objs) {
		data, err := examples.FS.ReadFile(examples.DefaultCluster)
		if err != nil {
			return err
		}
		if def, err = manifest.Decode("examples/"+examples.DefaultCluster, data); err != nil {
			return err
		}
		fmt.Fprintf(a.opts.ErrOut, "berth: no cluster defined yet; using the bundled example cluster (examples/%s)\n", examples.DefaultCluster)
	}
	for _, o := range append(def, objs...) {
		if c, ok := o.Object.(*eksctl.ClusterConfig); ok {
			if a.opts.KubernetesVersion == "" && c.Metadata.Version != "" {
				s.Info.KubernetesVersion = string(c.Metadata.Version)
			}
			if info, _, err := c.Resolve(o.Source.String()); err == nil {
				s.Info.VPCCIDR = info.VPCCIDR
			}
			break
		}
	}
	if err := admission.Bootstrap(s); err != nil {
		return err
	}
	for _, o := range def {
		if _, err := applyOne(s, o); err != nil {
			return err
		}
	}
	return nil
}

func definesNodes(objs []manifest.Object) bool {
	for _, o := range objs {
		switch o.Object.(type) {
		case *eksctl.ClusterConfig, *corev1.Node:
			return true
		}
	}
	return false
}

// applyOne applies one object and returns kubectl's line for it. It takes
// o.Object over: admission and the stored state change it in place.
func applyOne(s *cluster.State, o manifest.Object) (string, error) {
	return applyPrepared(s, o, prepare(o))
}

// preparedObject is what prepare found: the last-applied configuration
// (now also in the object's annotations) or the error that stops the apply.
type preparedObject struct {
	applied string
	err     error
}

// prepare does the part of applying o that depends on nothing but o: the
// last-applied annotation and the checks on the object with it. The
// manifest's object itself becomes the stored object (callers hand it over;
// Apply decodes every object for this one use), which saves a deep copy of
// every object of a big scenario.
func prepare(o manifest.Object) preparedObject {
	if _, ok := o.Object.(*eksctl.ClusterConfig); ok {
		return preparedObject{}
	}
	m, ok := o.Object.(metav1.Object)
	if !ok {
		return preparedObject{err: fmt.Errorf("berth cannot apply %s", o.GVK.Kind)}
	}
	applied, err := lastApplied(o, m)
	if err != nil {
		return preparedObject{err: err}
	}
	ann := m.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[LastAppliedAnnotation] = applied
	m.SetAnnotations(ann)
	if err := checkRequestSize(o.Object); err != nil {
		return preparedObject{err: err}
	}
	if err := manifest.ValidateAnnotations(o, ann); err != nil {
		return preparedObject{err: noSourcePrefix{err}}
	}
	return preparedObject{applied: applied}
}

// applyPrepared applies a prepared object to the cluster.
func applyPrepared(s *cluster.State, o manifest.Object, p preparedObject) (string, error) {
	if cc, ok := o.Object.(*eksctl.ClusterConfig); ok {
		op, err := applyClusterConfig(s, cc, o.Source)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("clusterconfig.eksctl.io/%s %s", cc.Metadata.Name, op), nil
	}
	if p.err != nil {
		return "", p.err
	}
	obj, applied := o.Object, p.applied
	m := obj.(metav1.Object)

	ref := resourceRef(obj, m.GetName())
	existing := lookupLive(s, obj, m)
	if existing == nil {
		if err := admission.Create(s, obj); err != nil {
			return "", err
		}
		if n, ok := obj.(*corev1.Node); ok {
			registerNode(s, n)
		}
		return ref + " created", nil
	}
	if em, ok := existing.(metav1.Object); ok && em.GetAnnotations()[LastAppliedAnnotation] == applied {
		return ref + " unchanged", nil
	}
	if live, ok := existing.(*corev1.Pod); ok {
		modified, err := withLastApplied(applied)
		if err != nil {
			return "", err
		}
		if obj, err = mergePodApply(live, modified); err != nil {
			return "", err
		}
	}
	if err := checkImmutable(existing, obj, s.Info.KubernetesVersion); err != nil {
		return "", err
	}
	if _, err := admission.Update(s, obj); err != nil {
		return "", err
	}
	return ref + " configured", nil
}

// resourceRef is kubectl's "<kind>[.<group>]/<name>".
func resourceRef(obj runtime.Object, name string) string {
	k := cluster.KindOf(obj)
	ref := strings.ToLower(k.GVK.Kind)
	if k.GVK.Group != "" {
		ref += "." + k.GVK.Group
	}
	return ref + "/" + name
}

// lookupLive returns the stored object the manifest refers to, or nil.
func lookupLive(s *cluster.State, obj runtime.Object, m metav1.Object) runtime.Object {
	k := cluster.KindOf(obj)
	if k == nil {
		return nil
	}
	key := m.GetName()
	if k.Namespaced {
		ns := m.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		key = cluster.Key(ns, m.GetName())
	}
	if live, ok := k.Get(s, key); ok {
		return live
	}
	return nil
}

// checkImmutable refuses the updates the API server refuses for the kinds berth keeps.
func checkImmutable(old, obj runtime.Object, kubeVersion string) error {
	switch o := obj.(type) {
	case *corev1.Pod:
		want := o.DeepCopy()
		admission.DefaultPod(want)
		admission.AddDefaultTolerations(want)
		if kubeVersion == "" {
			kubeVersion = cluster.DefaultKubernetesVersion
		}
		v, err := version.Parse(kubeVersion)
		if err != nil {
			return err
		}
		return admission.ValidatePodUpdate(want, old.(*corev1.Pod), v)
	case *appsv1.Deployment:
		od := old.(*appsv1.Deployment)
		if od.Spec.Selector != nil && o.Spec.Selector != nil && !reflect.DeepEqual(od.Spec.Selector, o.Spec.Selector) {
			return fmt.Errorf("The Deployment %q is invalid: spec.selector: Invalid value: %s: field is immutable", o.Name, metav1.FormatLabelSelector(o.Spec.Selector))
		}
	}
	return nil
}

// registerNode makes a Node applied from a manifest look registered: Ready
// unless it says otherwise, and known to the scheduler's node tree.
func registerNode(s *cluster.State, n *corev1.Node) {
	hasReady := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			hasReady = true
		}
	}
	if !hasReady {
		now := metav1.NewTime(s.Now)
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
		})
	}
	if n.Status.Capacity == nil && n.Status.Allocatable == nil && aws.IsEC2Node(n) {
		// An EC2 node exported without its status: what the EKS AMI would
		// report for its instance type. Other nodes keep what they say.
		if capacity, allocatable, ok := aws.NodeCapacityFromCatalog(n); ok {
			n.Status.Capacity, n.Status.Allocatable = capacity, allocatable
		}
	}
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	}
	// admission.Create announced the node; the scheduler reads this same
	// object, now with its status, when it next runs.
	s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, n.Name)
}

// maxRequestBodyBytes is kube-apiserver's default limit on a request body.
const maxRequestBodyBytes = 3 * 1024 * 1024

// checkRequestSize refuses an object whose request body (with the
// last-applied copy of itself) is over the API server's limit, with its text.
func checkRequestSize(obj runtime.Object) error {
	// Only the length matters: an Encoder writes the same JSON as Marshal
	// (plus a newline) without copying it out of its buffer.
	var n byteCounter
	if err := json.NewEncoder(&n).Encode(obj); err != nil {
		return err
	}
	if int(n)-1 > maxRequestBodyBytes {
		return fmt.Errorf("Request entity too large: limit is %d", maxRequestBodyBytes)
	}
	return nil
}

// byteCounter is an io.Writer that only counts.
type byteCounter int

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}

// noSourcePrefix marks an error that already names its manifest.
type noSourcePrefix struct{ error }

func (e noSourcePrefix) Unwrap() error { return e.error }
