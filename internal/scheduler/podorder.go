package scheduler

import (
	"sort"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// podOrder is the order of each node's pods in kube-scheduler's cache
// (NodeInfo.Pods), which the snapshot copies. Preemption observes it:
// MoreImportantPod is not a strict order for pods without a start time, so
// what sort.Slice makes of the potential victims, and therefore which are
// reprieved, depends on their order on the node.
//
// The cache appends a pod when it is added (the informer's initial list in
// key order, then informer adds and the scheduler's own assume/bind),
// removes one by moving the node's last pod into its slot
// (framework.removeFromSlice), and applies an update as a removal followed
// by an add. Bindings are taken as confirmed before the next pod is assumed
// (upstream's order then depends on informer timing). A fresh Scheduler
// starts from key order, as upstream does after a restart.
//
// The cache's UsedPorts of a node live as long as the cache too, and they
// are a set: when two pods on a node hold the same host port (pods bound
// without the scheduler can), removing one frees the port for the
// scheduler although the other still holds it. ports keeps each node's set
// through the same adds and removals, so the snapshot shows what
// upstream's long-lived cache shows.
type podOrder struct {
	byNode map[string][]string
	// seen is where and at which resourceVersion each pod was last
	// accounted; a newer resourceVersion is an update.
	seen  map[string]seenPod
	ports map[string]framework.HostPortInfo
}

type seenPod struct {
	node, rv string
	// hostPorts are the ports the pod added to its node's set.
	hostPorts []v1.ContainerPort
}

// inCache reports whether the snapshot holds the pod.
func inCache(p *v1.Pod) bool { return p.Spec.NodeName != "" && !cluster.IsTerminal(p) }

// add appends the pod to its node's list.
func (o *podOrder) add(key string, p *v1.Pod) {
	node := p.Spec.NodeName
	o.byNode[node] = append(o.byNode[node], key)
	hostPorts := framework.HostPorts(p)
	o.seen[key] = seenPod{node: node, rv: p.ResourceVersion, hostPorts: hostPorts}
	if len(hostPorts) > 0 && o.ports[node] == nil {
		o.ports[node] = framework.HostPortInfo{}
	}
	for _, hp := range hostPorts {
		o.ports[node].Add(hp.HostIP, string(hp.Protocol), hp.HostPort)
	}
}

// usedPorts sets the node's used ports to the cache's set.
func (o *podOrder) usedPorts(ni *framework.NodeInfo) {
	if set := o.ports[ni.Name()]; len(set) > 0 {
		ni.UsedPorts = set.Clone()
	} else {
		ni.UsedPorts = nil
	}
}

// remove takes the pod off its node the way the cache does: the last pod
// of the node fills its slot.
func (o *podOrder) remove(key string) {
	sp, ok := o.seen[key]
	if !ok {
		return
	}
	delete(o.seen, key)
	for _, hp := range sp.hostPorts {
		o.ports[sp.node].Remove(hp.HostIP, string(hp.Protocol), hp.HostPort)
	}
	list := o.byNode[sp.node]
	for i, k := range list {
		if k == key {
			last := len(list) - 1
			list[i] = list[last]
			list = list[:last]
			break
		}
	}
	if len(list) == 0 {
		delete(o.byNode, sp.node)
		return
	}
	o.byNode[sp.node] = list
}

// sync brings the order up to the state. The first call lists every pod by
// key. Later calls first remove pods that left (deleted, terminal, moved),
// in list order, then re-add the pods written since the last call in write
// (resourceVersion) order; what happened in between is not known, so this
// is the order of each pod's last write.
func (o *podOrder) sync(s *cluster.State) {
	if o.seen == nil {
		// seen is sized for every pod: a simulation binds pending pods.
		o.byNode, o.seen, o.ports = map[string][]string{}, make(map[string]seenPod, len(s.Pods)), map[string]framework.HostPortInfo{}
		// Key order over the bound pods alone: sorting every key would
		// cost the pending pods too, which a simulation has by thousands.
		var keys []string
		for key, p := range s.Pods {
			if inCache(p) {
				keys = append(keys, key)
			}
		}
		sort.Strings(keys)
		for _, key := range keys {
			o.add(key, s.Pods[key])
		}
		return
	}
	for _, node := range cluster.SortedKeys(o.byNode) {
		for _, key := range append([]string(nil), o.byNode[node]...) {
			if p := s.Pods[key]; p == nil || !inCache(p) || p.Spec.NodeName != node {
				o.remove(key)
			}
		}
	}
	type write struct {
		key string
		rv  uint64
	}
	var writes []write
	for key, p := range s.Pods {
		if !inCache(p) {
			continue
		}
		if sp, ok := o.seen[key]; ok && sp.rv == p.ResourceVersion {
			continue
		}
		rv, _ := strconv.ParseUint(p.ResourceVersion, 10, 64)
		writes = append(writes, write{key: key, rv: rv})
	}
	sort.Slice(writes, func(i, j int) bool {
		if writes[i].rv != writes[j].rv {
			return writes[i].rv < writes[j].rv
		}
		return writes[i].key < writes[j].key
	})
	for _, w := range writes {
		o.remove(w.key)
		o.add(w.key, s.Pods[w.key])
	}
}

// clone copies the order (tests compare a fresh build with the live one).
func (o *podOrder) clone() podOrder {
	c := podOrder{byNode: make(map[string][]string, len(o.byNode)), seen: make(map[string]seenPod, len(o.seen)),
		ports: make(map[string]framework.HostPortInfo, len(o.ports))}
	for n, set := range o.ports {
		c.ports[n] = set.Clone()
	}
	for n, list := range o.byNode {
		c.byNode[n] = append([]string(nil), list...)
	}
	for k, v := range o.seen {
		c.seen[k] = v
	}
	return c
}
