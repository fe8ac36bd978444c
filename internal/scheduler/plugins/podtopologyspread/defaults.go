package podtopologyspread

import (
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// defaultSelectors caches the system-default selector (the Services,
// ReplicaSet, StatefulSet or ReplicationController that select a pod) by
// what DefaultSelector reads of the pod: its namespace, labels and
// controller reference. Pods of one template share it, and building it
// (parsing the owner's label selector) costs more than the rest of
// PreScore's setup. Entries live for one epoch of the handle's objects
// (framework.ObjectsEpoch); a handle without epochs is not cached.
type defaultSelectors struct {
	mu    sync.Mutex
	epoch uint64
	byKey map[string]labels.Selector
	key   []byte
	names []string
}

// maxDefaultSelectors bounds the cache within one epoch (bare pods with
// unique labels would otherwise grow it without limit).
const maxDefaultSelectors = 4096

// defaultSelector is helper.DefaultSelector(pod, pl.handle), cached.
func (pl *Plugin) defaultSelector(pod *v1.Pod) labels.Selector {
	e, ok := pl.handle.(framework.ObjectsEpoch)
	if !ok {
		return helper.DefaultSelector(pod, pl.handle)
	}
	c := &pl.defaults
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch := e.ObjectsEpoch(); c.byKey == nil || c.epoch != epoch || len(c.byKey) >= maxDefaultSelectors {
		c.epoch, c.byKey = epoch, map[string]labels.Selector{}
	}
	c.key = c.appendKey(c.key[:0], pod)
	if sel, ok := c.byKey[string(c.key)]; ok {
		return sel
	}
	sel := helper.DefaultSelector(pod, pl.handle)
	c.byKey[string(c.key)] = sel
	return sel
}

// appendKey spells out the pod's namespace, controller reference and
// labels (sorted), each part length-prefixed so that no two pods that
// differ in them share a key.
func (c *defaultSelectors) appendKey(b []byte, pod *v1.Pod) []byte {
	part := func(s string) {
		n := len(s)
		b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		b = append(b, s...)
	}
	part(pod.Namespace)
	if owner := metav1.GetControllerOfNoCopy(pod); owner != nil {
		b = append(b, 1)
		part(owner.APIVersion)
		part(owner.Kind)
		part(owner.Name)
	} else {
		b = append(b, 0)
	}
	c.names = c.names[:0]
	for k := range pod.Labels {
		c.names = append(c.names, k)
	}
	sort.Strings(c.names)
	for _, k := range c.names {
		part(k)
		part(pod.Labels[k])
	}
	return b
}
