package scaleup

import (
	"encoding/json"
	"reflect"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// classes sorts pods into equivalence classes: pods of one controller
// (owner UID) whose specs, less the node name, encode to the same JSON are
// one class, as cluster-autoscaler groups pods it judges once
// (docs/cluster-autoscaler.md#scale-up). Encoding every pod costs more
// than the rest of a large decision, so a pod is first compared
// structurally with each class of its owner (equal values encode equally);
// JSON is the fallback for specs that differ in form only (a nil against
// an empty list), so the classes are exactly those of the JSON key.
type classes struct {
	byOwner map[string][]*class
	ofPod   map[*corev1.Pod]string
	n       int
}

type class struct {
	key  string
	spec corev1.PodSpec
	json string // encoded on first need
}

// key is pod's class key, "" for a pod without a controller (a class of
// its own).
func (c *classes) key(pod *corev1.Pod) string {
	if k, ok := c.ofPod[pod]; ok {
		return k
	}
	if c.ofPod == nil {
		c.ofPod, c.byOwner = map[*corev1.Pod]string{}, map[string][]*class{}
	}
	k := c.classify(pod)
	c.ofPod[pod] = k
	return k
}

func (c *classes) classify(pod *corev1.Pod) string {
	owner := ownerUID(pod)
	if owner == "" {
		return ""
	}
	spec := pod.Spec
	spec.NodeName = ""
	known := c.byOwner[owner]
	for _, cl := range known {
		if reflect.DeepEqual(cl.spec, spec) {
			return cl.key
		}
	}
	enc := ""
	if len(known) > 0 {
		enc = specJSON(&spec)
		for _, cl := range known {
			if cl.json == "" {
				cl.json = specJSON(&cl.spec)
			}
			if cl.json == enc {
				return cl.key
			}
		}
	}
	c.n++
	cl := &class{key: owner + "/" + strconv.Itoa(c.n), spec: spec, json: enc}
	c.byOwner[owner] = append(known, cl)
	return cl.key
}

func specJSON(spec *corev1.PodSpec) string {
	data, _ := json.Marshal(spec)
	return string(data)
}
