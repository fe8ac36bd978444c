package app

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// NodeEditRequest is `berth taint nodes NODE SPEC...` or `berth label nodes NODE SPEC...`.
type NodeEditRequest struct {
	Args      []string // resource type, node names, then specs
	Overwrite bool
}

// splitNodeArgs separates "nodes NAME... SPEC..." the way kubectl does: the
// first argument is the resource type, then names until the first spec.
func splitNodeArgs(args []string, isSpec func(string) bool) (names, specs []string, err error) {
	if len(args) < 2 {
		return nil, nil, fmt.Errorf("at least one resource name and one spec must be specified")
	}
	switch strings.ToLower(args[0]) {
	case "node", "nodes", "no":
	default:
		return nil, nil, fmt.Errorf("berth models this command for nodes only, not %q", args[0])
	}
	for _, a := range args[1:] {
		if isSpec(a) {
			specs = append(specs, a)
		} else if len(specs) > 0 {
			return nil, nil, fmt.Errorf("all resources must be specified before taint changes: %s", a)
		} else {
			names = append(names, a)
		}
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("at least one resource name must be specified since 'all' parameter is not set")
	}
	if len(specs) == 0 {
		return nil, nil, fmt.Errorf("at least one taint update is required")
	}
	return names, specs, nil
}

// Taint changes node taints as kubectl taint does: "key=value:Effect" or
// "key:Effect" adds, "key:Effect-" and "key-" remove.
func (a *App) Taint(r NodeEditRequest) (err error) {
	defer a.finish(&err)
	names, specs, err := splitNodeArgs(r.Args, func(s string) bool {
		return strings.Contains(s, ":") || strings.HasSuffix(s, "-") || strings.Contains(s, "=")
	})
	if err != nil {
		return err
	}
	add, remove, err := parseTaints(specs)
	if err != nil {
		return err
	}
	work := a.change()
	nodes, err := lookupNodes(work, names)
	if err != nil {
		return err
	}
	o := &output{}
	for _, node := range nodes {
		if !r.Overwrite {
			if exists := existingTaintKeys(node.Spec.Taints, add); exists != "" {
				return fmt.Errorf("node %s already has %s taint(s) with same effect(s) and --overwrite is false", node.Name, exists)
			}
		}
		op, taints, err := reorganizeTaints(node, r.Overwrite, add, remove)
		if err != nil {
			return err
		}
		now := metav1.NewTime(work.Now)
		for i := range taints {
			// The API server stamps NoExecute taints with the time they were added.
			if taints[i].Effect == corev1.TaintEffectNoExecute && taints[i].TimeAdded == nil {
				taints[i].TimeAdded = &now
			}
		}
		old := node.DeepCopy()
		node.Spec.Taints = taints
		touchNode(work, old, node)
		o.out("node/%s %s", node.Name, op)
	}
	return a.commit(work, o)
}

// parseTaints is kubectl's ParseTaints.
func parseTaints(specs []string) (add, remove []corev1.Taint, err error) {
	seen := map[string]bool{}
	for _, spec := range specs {
		if strings.HasSuffix(spec, "-") {
			t := corev1.Taint{}
			body := strings.TrimSuffix(spec, "-")
			if key, effect, ok := strings.Cut(body, ":"); ok {
				t.Key, t.Effect = key, corev1.TaintEffect(effect)
				if err := validateTaintEffect(t.Effect); err != nil {
					return nil, nil, err
				}
			} else {
				t.Key = body
			}
			remove = append(remove, t)
			continue
		}
		t, err := parseTaint(spec)
		if err != nil {
			return nil, nil, err
		}
		id := t.Key + ":" + string(t.Effect)
		if seen[id] {
			return nil, nil, fmt.Errorf("duplicated taints with the same key and effect: %v", t)
		}
		seen[id] = true
		add = append(add, t)
	}
	return add, remove, nil
}

func parseTaint(spec string) (corev1.Taint, error) {
	var t corev1.Taint
	parts := strings.Split(spec, ":")
	if len(parts) != 2 || parts[1] == "" {
		return t, fmt.Errorf("invalid taint spec: %v", spec)
	}
	t.Effect = corev1.TaintEffect(parts[1])
	if err := validateTaintEffect(t.Effect); err != nil {
		return t, err
	}
	key, value, _ := strings.Cut(parts[0], "=")
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return t, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return t, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
	}
	t.Key, t.Value = key, value
	return t, nil
}

func validateTaintEffect(effect corev1.TaintEffect) error {
	switch effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	}
	return fmt.Errorf("invalid taint effect: %v, unsupported taint effect", effect)
}

// existingTaintKeys lists the keys of taints to add that the node already
// has with the same effect.
func existingTaintKeys(current, add []corev1.Taint) string {
	var keys []string
	for _, t := range add {
		for _, c := range current {
			if c.Key == t.Key && c.Effect == t.Effect {
				keys = append(keys, t.Key)
				break
			}
		}
	}
	return strings.Join(keys, ",")
}

// reorganizeTaints is kubectl's: the new taints first, then the old ones
// they do not replace, minus the removed ones; the verb says what happened.
func reorganizeTaints(node *corev1.Node, overwrite bool, add, remove []corev1.Taint) (string, []corev1.Taint, error) {
	taints := append([]corev1.Taint{}, add...)
	for _, old := range node.Spec.Taints {
		replaced := false
		for _, t := range add {
			if t.Key == old.Key && t.Effect == old.Effect {
				replaced = true
				break
			}
		}
		if !replaced {
			taints = append(taints, old)
		}
	}
	added := len(node.Spec.Taints) != len(taints)
	var errs []string
	deleted := false
	for _, r := range remove {
		kept := taints[:0]
		found := false
		for _, t := range taints {
			if t.Key == r.Key && (r.Effect == "" || t.Effect == r.Effect) {
				found = true
				continue
			}
			kept = append(kept, t)
		}
		taints = kept
		if !found {
			errs = append(errs, fmt.Sprintf("taint %q not found", taintString(r)))
		} else {
			deleted = true
		}
	}
	if len(errs) > 0 {
		return "", nil, fmt.Errorf("%s", aggregateText(errs))
	}
	if len(taints) == 0 {
		taints = nil
	}
	switch {
	case (added && deleted) || overwrite:
		return "modified", taints, nil
	case added:
		return "tainted", taints, nil
	}
	return "untainted", taints, nil
}

// taintString is Taint.ToString: "key=value:Effect", parts omitted when empty.
func taintString(t corev1.Taint) string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	if t.Effect != "" {
		s += ":" + string(t.Effect)
	}
	return s
}

// Label changes node labels as kubectl label does: "k=v" sets, "k-" removes.
func (a *App) Label(r NodeEditRequest) (err error) {
	defer a.finish(&err)
	names, specs, err := splitNodeArgs(r.Args, func(s string) bool { return strings.Contains(s, "=") || strings.HasSuffix(s, "-") })
	if err != nil {
		return err
	}
	set := map[string]string{}
	var order []string
	var remove []string
	for _, spec := range specs {
		if strings.HasSuffix(spec, "-") && !strings.Contains(spec, "=") {
			remove = append(remove, strings.TrimSuffix(spec, "-"))
			continue
		}
		key, value, _ := strings.Cut(spec, "=")
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return fmt.Errorf("invalid label spec: %v", spec)
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return fmt.Errorf("invalid label value: %q: %s", spec, strings.Join(errs, ";"))
		}
		if _, dup := set[key]; !dup {
			order = append(order, key)
		}
		set[key] = value
	}
	work := a.change()
	nodes, err := lookupNodes(work, names)
	if err != nil {
		return err
	}
	o := &output{}
	for _, node := range nodes {
		before := len(node.Labels)
		prev := node.DeepCopy()
		changed := false
		for _, k := range order {
			old, ok := node.Labels[k]
			if ok && !r.Overwrite {
				return fmt.Errorf("'%s' already has a value (%s), and --overwrite is false", k, old)
			}
			if !ok || old != set[k] {
				if node.Labels == nil {
					node.Labels = map[string]string{}
				}
				node.Labels[k] = set[k]
				changed = true
			}
		}
		for _, k := range remove {
			if _, ok := node.Labels[k]; !ok {
				o.errf("label %q not found.", k)
				continue
			}
			delete(node.Labels, k)
			changed = true
		}
		verb := "not labeled"
		if changed {
			verb = "labeled"
			if !r.Overwrite && len(node.Labels) < before {
				verb = "unlabeled"
			}
			touchNode(work, prev, node)
		}
		o.out("node/%s %s", node.Name, verb)
	}
	return a.commit(work, o)
}
