package controllertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/manifest"
	"github.com/berth-sim/berth/internal/sim"
)

// RunScenarios runs every datadriven file under dir, each against a fresh
// state (NewState: the bootstrapped namespaces) and a fresh set of
// controllers. A story of several steps (a rollout, an eviction after a
// toleration runs out) reads better as a scenario than as a table.
//
// Directives that change the cluster:
//
//	node name=n1 cpu=4 memory=8Gi [labels=k=v,k2=v2] [taints=k=v:NoExecute,k2:NoSchedule]
//	apply                 YAML documents in the input; created (or updated) through admission
//	delete Kind/ns/name   or Kind/name for cluster-scoped kinds; owned objects go through the GC
//	taint n1 k=v:Effect   adds a taint (NoExecute ones get timeAdded, as the API server does)
//	untaint n1 k[:Effect] removes taints by key (and effect)
//	bind                  one Sync of Binder, the scheduler stand-in
//	sync [controller=x]   one Sync of every controller (or of x), in order
//	run                   sim.RunNow: all controllers at this instant until nothing changes
//	settle                sim.Settle until no settling timer is left
//	advance 30s           sim.Advance: the clock moves on, firing timers, then settles the instant
//
// Directives that print (virtual time is shown as +offset from cluster.Epoch):
//
//	pods                  one line per pod, in key order
//	events [from=(a,b)]   events recorded or repeated since the last `events`, in log order;
//	                      without from, the kubelet's per-container events are left out
//	get kind              one line per object with its status counters
//
// Regenerate expected output with -rewrite and review the diff.
func RunScenarios(t *testing.T, dir string, controllers func() []sim.Controller) {
	t.Helper()
	RunScenariosWith(t, dir, nil, controllers)
}

// Directive is a directive a package adds to its own scenarios (to create
// objects admission does not take, or print what its story is about).
type Directive func(s *cluster.State, d *datadriven.TestData) (string, error)

// RunScenariosWith is RunScenarios with extra directives by name; they
// cannot replace the built-in ones.
func RunScenariosWith(t *testing.T, dir string, extra map[string]Directive, controllers func() []sim.Controller) {
	t.Helper()
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		h := &harness{s: NewState(), ctrls: controllers(), seen: map[string]int32{}, extra: extra}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := h.run(d)
			if err != nil {
				// Errors are part of the story (a rejected manifest), not a crash.
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

type harness struct {
	s     *cluster.State
	ctrls []sim.Controller
	// seen is each event's count as last printed, by event name, so that
	// `events` shows new events and repeats folded into old ones.
	seen  map[string]int32
	extra map[string]Directive
}

func (h *harness) run(d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "node":
		return h.node(d)
	case "apply":
		return h.apply(d.Input)
	case "delete":
		return h.delete(d)
	case "taint", "untaint":
		return h.taint(d)
	case "bind":
		_, err := Binder{}.Sync(h.s)
		return "", err
	case "sync":
		return h.sync(d)
	case "run":
		return h.clock(sim.RunNow(h.s, h.ctrls))
	case "settle":
		return h.clock(sim.Settle(h.s, h.ctrls, sim.DefaultSettleHorizon))
	case "advance":
		if len(d.CmdArgs) != 1 {
			return "", fmt.Errorf("usage: advance DURATION")
		}
		dur, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			return "", err
		}
		return h.clock(sim.Advance(h.s, h.ctrls, dur))
	case "pods":
		return h.pods(), nil
	case "events":
		return h.events(d), nil
	case "get":
		if len(d.CmdArgs) != 1 {
			return "", fmt.Errorf("usage: get KIND")
		}
		return h.get(d.CmdArgs[0].Key)
	}
	if f, ok := h.extra[d.Cmd]; ok {
		return f(h.s, d)
	}
	return "", fmt.Errorf("unknown directive %q", d.Cmd)
}

// clock is what the time-moving directives print once they ran: where the
// clock is now.
func (h *harness) clock(err error) (string, error) {
	return "now " + offset(h.s.Now) + "\n", err
}

func offset(t time.Time) string { return "+" + t.Sub(cluster.Epoch).String() }

func (h *harness) node(d *datadriven.TestData) (string, error) {
	var name, cpu, mem string
	labels := map[string]string{}
	var taints []corev1.Taint
	for _, a := range d.CmdArgs {
		v := strings.Join(a.Vals, ",")
		switch a.Key {
		case "name":
			name = v
		case "cpu":
			cpu = v
		case "memory":
			mem = v
		case "labels":
			for _, kv := range strings.Split(v, ",") {
				k, val, _ := strings.Cut(kv, "=")
				labels[k] = val
			}
		case "taints":
			for _, spec := range strings.Split(v, ",") {
				tt, err := parseTaint(spec)
				if err != nil {
					return "", err
				}
				tt.TimeAdded = h.noExecuteTime(tt)
				taints = append(taints, tt)
			}
		default:
			return "", fmt.Errorf("node: unknown argument %q", a.Key)
		}
	}
	if name == "" || cpu == "" || mem == "" {
		return "", fmt.Errorf("node needs name, cpu and memory")
	}
	AddNode(h.s, name, cpu, mem, labels, taints...)
	return "", nil
}

// noExecuteTime is the timeAdded the API server stamps on a NoExecute taint.
func (h *harness) noExecuteTime(t corev1.Taint) *metav1.Time {
	if t.Effect != corev1.TaintEffectNoExecute {
		return nil
	}
	now := metav1.NewTime(h.s.Now)
	return &now
}

// parseTaint reads "key=value:Effect" or "key:Effect".
func parseTaint(spec string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(spec, ":")
	if !ok || effect == "" {
		return corev1.Taint{}, fmt.Errorf("invalid taint %q (want key[=value]:Effect)", spec)
	}
	k, v, _ := strings.Cut(kv, "=")
	return corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}, nil
}

// apply decodes the input with the manifest package, as `berth apply` reads
// files, and creates each object through admission (or updates it when it
// exists), so defaults and generation bumps are those of berth apply.
func (h *harness) apply(input string) (string, error) {
	objs, err := manifest.Decode("input", []byte(input))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, o := range objs {
		kind := cluster.KindOf(o.Object)
		if kind == nil {
			return b.String(), fmt.Errorf("%s: kind %s is not stored", o.Source, o.Kind())
		}
		ns := o.Namespace()
		if kind.Namespaced && ns == "" {
			ns = metav1.NamespaceDefault
		}
		label := strings.ToLower(o.Kind()) + "/" + o.Name()
		if _, exists := kind.Get(h.s, cluster.Key(ns, o.Name())); exists {
			changed, err := admission.Update(h.s, o.Object)
			if err != nil {
				return b.String(), err
			}
			fmt.Fprintf(&b, "%s %s\n", label, map[bool]string{true: "configured", false: "unchanged"}[changed])
			continue
		}
		if err := admission.Create(h.s, o.Object); err != nil {
			return b.String(), err
		}
		fmt.Fprintf(&b, "%s created\n", label)
	}
	return b.String(), nil
}

// delete removes one object as `berth delete` does with background
// cascading: what it owns is left to the garbage collector.
func (h *harness) delete(d *datadriven.TestData) (string, error) {
	if len(d.CmdArgs) != 1 {
		return "", fmt.Errorf("usage: delete Kind/ns/name or Kind/name")
	}
	parts := strings.Split(d.CmdArgs[0].Key, "/")
	kind := findKind(parts[0])
	if kind == nil || len(parts) < 2 {
		return "", fmt.Errorf("delete: cannot resolve %q", d.CmdArgs[0].Key)
	}
	ns, name := "", parts[len(parts)-1]
	if kind.Namespaced {
		ns = metav1.NamespaceDefault
		if len(parts) == 3 {
			ns = parts[1]
		}
	}
	key := cluster.Key(ns, name)
	obj, ok := kind.Get(h.s, key)
	if !ok {
		return "", admission.NotFound(kind.Resource, name)
	}
	if pod, isPod := obj.(*corev1.Pod); isPod {
		h.s.GracefulDeletePod(pod, nil) // as kubectl delete: Terminating first
	} else if h.s.MarkDeleting(obj.(metav1.Object)) {
		// A finalizer holds it until its controller lets go.
	} else {
		kind.Remove(h.s, key)
		h.s.Bump()
		if node, isNode := obj.(*corev1.Node); isNode {
			h.s.NodeDeleted(node)
		} else {
			h.s.ObjectDeleted(obj)
		}
	}
	return "", nil
}

// findKind resolves a kind name, resource name or short name.
func findKind(name string) *cluster.Kind {
	name = strings.ToLower(name)
	for _, k := range cluster.Kinds {
		if strings.ToLower(k.GVK.Kind) == name || k.Resource == name || slices.Contains(k.ShortNames, name) {
			return k
		}
	}
	return nil
}

// taint adds (taint) or removes (untaint) node taints; the write wakes the
// controllers as a node update does.
func (h *harness) taint(d *datadriven.TestData) (string, error) {
	if len(d.CmdArgs) != 2 {
		return "", fmt.Errorf("usage: %s NODE key[=value][:Effect]", d.Cmd)
	}
	node, ok := h.s.Nodes[d.CmdArgs[0].Key]
	if !ok {
		return "", admission.NotFound("nodes", d.CmdArgs[0].Key)
	}
	old := node.DeepCopy()
	spec := d.CmdArgs[1].Key
	if len(d.CmdArgs[1].Vals) > 0 {
		spec += "=" + d.CmdArgs[1].Vals[0]
	}
	if d.Cmd == "taint" {
		tt, err := parseTaint(spec)
		if err != nil {
			return "", err
		}
		tt.TimeAdded = h.noExecuteTime(tt)
		node.Spec.Taints = append(node.Spec.Taints, tt)
	} else {
		key, effect, _ := strings.Cut(spec, ":")
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == key && (effect == "" || string(t.Effect) == effect)
		})
	}
	node.ResourceVersion = h.s.Bump()
	h.s.NodeUpdated(old, node)
	return "", nil
}

// sync runs one Sync of every controller (or the named one) and prints
// which of them changed something.
func (h *harness) sync(d *datadriven.TestData) (string, error) {
	var only string
	for _, a := range d.CmdArgs {
		if a.Key != "controller" || len(a.Vals) != 1 {
			return "", fmt.Errorf("usage: sync [controller=NAME]")
		}
		only = a.Vals[0]
	}
	var changed []string
	found := false
	for _, c := range h.ctrls {
		if only != "" && c.Name() != only {
			continue
		}
		found = true
		ch, err := c.Sync(h.s)
		if err != nil {
			return "", fmt.Errorf("%s: %w", c.Name(), err)
		}
		if ch {
			changed = append(changed, c.Name())
		}
	}
	if !found {
		return "", fmt.Errorf("no controller named %q", only)
	}
	if len(changed) == 0 {
		return "no change\n", nil
	}
	return "changed: " + strings.Join(changed, ", ") + "\n", nil
}

func (h *harness) pods() string {
	var b strings.Builder
	for _, k := range cluster.SortedKeys(h.s.Pods) {
		b.WriteString(podLine(h.s.Pods[k]))
	}
	return b.String()
}

// podLine is a pod's name, node, phase, readiness and controller.
func podLine(p *corev1.Pod) string {
	node := p.Spec.NodeName
	if node == "" {
		node = "<none>"
	}
	line := fmt.Sprintf("%s node=%s phase=%s ready=%t", name(p), node, p.Status.Phase, podReady(p))
	if ref := metav1.GetControllerOf(p); ref != nil {
		line += fmt.Sprintf(" owner=%s/%s", ref.Kind, ref.Name)
	}
	if p.DeletionTimestamp != nil {
		line += " terminating until " + offset(p.DeletionTimestamp.Time)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			line += " disruption-target=" + c.Reason
		}
	}
	return line + "\n"
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// name is the object's name, qualified with its namespace outside default.
func name(m metav1.Object) string {
	if m.GetNamespace() == "" || m.GetNamespace() == metav1.NamespaceDefault {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// kubeletReasons are the per-container start-up events: the kubelet's own
// tests cover them, and in a controller's story they are noise.
var kubeletReasons = []string{"Pulling", "Pulled", "Created", "Started"}

func (h *harness) events(d *datadriven.TestData) string {
	var from []string
	for _, a := range d.CmdArgs {
		if a.Key == "from" {
			from = a.Vals
		}
	}
	var b strings.Builder
	for _, e := range h.s.Events {
		if h.seen[e.Name] == e.Count {
			continue
		}
		h.seen[e.Name] = e.Count
		if from != nil && !slices.Contains(from, e.Source.Component) {
			continue
		}
		if from == nil && e.Source.Component == "kubelet" && slices.Contains(kubeletReasons, e.Reason) {
			continue
		}
		fmt.Fprintf(&b, "%s %s %s %s/%s: %s", offset(e.LastTimestamp.Time), e.Type, e.Reason,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
		if e.Count > 1 {
			fmt.Fprintf(&b, " (x%d)", e.Count)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (h *harness) get(kindName string) (string, error) {
	kind := findKind(kindName)
	if kind == nil {
		return "", fmt.Errorf("get: unknown kind %q", kindName)
	}
	objs := kind.List(h.s)
	slices.SortFunc(objs, func(a, b runtime.Object) int {
		ma, mb := a.(metav1.Object), b.(metav1.Object)
		return strings.Compare(cluster.Key(ma.GetNamespace(), ma.GetName()), cluster.Key(mb.GetNamespace(), mb.GetName()))
	})
	var b strings.Builder
	for _, o := range objs {
		b.WriteString(objectLine(o))
	}
	return b.String(), nil
}

// objectLine prints the status counters a controller's story is about.
func objectLine(o runtime.Object) string {
	switch o := o.(type) {
	case *corev1.Pod:
		return podLine(o)
	case *corev1.Node:
		line := o.Name
		for _, t := range o.Spec.Taints {
			line += fmt.Sprintf(" taint=%s=%s:%s", t.Key, t.Value, t.Effect)
		}
		if o.Spec.Unschedulable {
			line += " unschedulable"
		}
		return line + "\n"
	case *appsv1.Deployment:
		st := o.Status
		return fmt.Sprintf("%s replicas=%d/%d updated=%d ready=%d available=%d unavailable=%d generation=%d/%d\n",
			name(o), st.Replicas, deref(o.Spec.Replicas), st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas,
			st.UnavailableReplicas, st.ObservedGeneration, o.Generation)
	case *appsv1.ReplicaSet:
		line := fmt.Sprintf("%s desired=%d current=%d ready=%d available=%d revision=%s",
			name(o), deref(o.Spec.Replicas), o.Status.Replicas, o.Status.ReadyReplicas, o.Status.AvailableReplicas,
			o.Annotations["deployment.kubernetes.io/revision"])
		if ref := metav1.GetControllerOf(o); ref != nil {
			line += fmt.Sprintf(" owner=%s/%s", ref.Kind, ref.Name)
		}
		return line + "\n"
	case *appsv1.StatefulSet:
		st := o.Status
		return fmt.Sprintf("%s replicas=%d/%d ready=%d current=%d updated=%d available=%d\n",
			name(o), st.Replicas, deref(o.Spec.Replicas), st.ReadyReplicas, st.CurrentReplicas, st.UpdatedReplicas, st.AvailableReplicas)
	case *appsv1.DaemonSet:
		st := o.Status
		return fmt.Sprintf("%s desired=%d current=%d ready=%d updated=%d available=%d misscheduled=%d\n",
			name(o), st.DesiredNumberScheduled, st.CurrentNumberScheduled, st.NumberReady, st.UpdatedNumberScheduled,
			st.NumberAvailable, st.NumberMisscheduled)
	}
	return name(o.(metav1.Object)) + "\n"
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
