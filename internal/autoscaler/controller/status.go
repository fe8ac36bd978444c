package controller

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

// StatusConfigMap is the default name of cluster-autoscaler's status ConfigMap.
const StatusConfigMap = "cluster-autoscaler-status"

// statusConfigMap returns the status ConfigMap, creating it empty.
func statusConfigMap(s *cluster.State) *corev1.ConfigMap {
	ns, name := metav1.NamespaceSystem, StatusConfigMap
	if o, ok, err := Options(s); ok && err == nil {
		ns, name = o.Namespace, o.StatusConfigMapName
	}
	key := cluster.Key(ns, name)
	if cm := s.ConfigMaps[key]; cm != nil {
		return cm
	}
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(s.NewUID()),
			CreationTimestamp: metav1.NewTime(s.Now), ResourceVersion: s.Bump(),
			Annotations: map[string]string{}},
		Data: map[string]string{},
	}
	s.NoteCreated(cm.UID)
	s.ConfigMaps[key] = cm
	return cm
}

// regardingStatus is the reference cluster-autoscaler's log events point at.
func regardingStatus(s *cluster.State) corev1.ObjectReference {
	return cluster.Regarding("ConfigMap", "v1", statusConfigMap(s))
}

// writeStatus writes the "status" key in cluster-autoscaler's YAML shape
// (docs/cluster-autoscaler.md#status-configmap): cluster-wide health and
// node counts, scale-up and scale-down activity, then each node group.
// berth writes the probe time only (no transition times).
func writeStatus(l *loop) {
	s := l.s
	cm := statusConfigMap(s)
	now := s.Now.UTC().Format("2006-01-02 15:04:05.999999999 -0700 MST")
	probe := s.Now.UTC().Format("2006-01-02T15:04:05Z")
	var b strings.Builder
	fmt.Fprintf(&b, "time: %s\nautoscalerStatus: Running\nclusterWide:\n", now)
	total, ready := 0, 0
	for _, g := range l.groups {
		for _, n := range g.Nodes(s) {
			total++
			if isReady(n) {
				ready++
			}
		}
	}
	writeHealth(&b, "  ", total, ready, -1, 0, 0, probe)
	scaleUp := "NoActivity"
	if len(s.Autoscaler.Launching) > 0 {
		scaleUp = "InProgress"
	}
	fmt.Fprintf(&b, "  scaleUp:\n    status: %s\n    lastProbeTime: %q\n", scaleUp, probe)
	scaleDown := "NoCandidates"
	if l.candidates > 0 {
		scaleDown = "CandidatesPresent"
	}
	fmt.Fprintf(&b, "  scaleDown:\n    status: %s\n", scaleDown)
	if l.candidates > 0 {
		fmt.Fprintf(&b, "    candidates: %d\n", l.candidates)
	}
	fmt.Fprintf(&b, "    lastProbeTime: %q\n", probe)
	if len(l.groups) > 0 {
		b.WriteString("nodeGroups:\n")
	}
	for _, g := range l.groups {
		gt, gr := 0, 0
		for _, n := range g.Nodes(s) {
			gt++
			if isReady(n) {
				gr++
			}
		}
		ng := l.ngOf(g)
		fmt.Fprintf(&b, "- name: %s\n", g.Name)
		writeHealth(&b, "  ", gt, gr, ng.DesiredSize, g.MinSize, g.MaxSize, probe)
		up := "NoActivity"
		if launching(s, ng.Name) > 0 {
			up = "InProgress"
		}
		fmt.Fprintf(&b, "  scaleUp:\n    status: %s\n    lastProbeTime: %q\n", up, probe)
		down := "NoCandidates"
		n := 0
		for _, node := range g.Nodes(s) {
			if _, ok := s.Autoscaler.Unneeded[node.Name]; ok {
				n++
			}
		}
		if n > 0 {
			down = "CandidatesPresent"
		}
		fmt.Fprintf(&b, "  scaleDown:\n    status: %s\n", down)
		if n > 0 {
			fmt.Fprintf(&b, "    candidates: %d\n", n)
		}
		fmt.Fprintf(&b, "    lastProbeTime: %q\n", probe)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if cm.Data["status"] == b.String() {
		return
	}
	cm.Data["status"] = b.String()
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations["cluster-autoscaler.kubernetes.io/last-updated"] = now
	cm.ResourceVersion = s.Bump()
}

func writeHealth(b *strings.Builder, ind string, total, ready, target, min, max int, probe string) {
	fmt.Fprintf(b, "%shealth:\n%s  status: Healthy\n%s  nodeCounts:\n%s    registered:\n", ind, ind, ind, ind)
	fmt.Fprintf(b, "%s      total: %d\n%s      ready: %d\n%s      notStarted: 0\n", ind, total, ind, ready, ind)
	fmt.Fprintf(b, "%s    longUnregistered: 0\n%s    unregistered: 0\n", ind, ind)
	if target >= 0 {
		fmt.Fprintf(b, "%s  cloudProviderTarget: %d\n%s  minSize: %d\n%s  maxSize: %d\n", ind, target, ind, min, ind, max)
	}
	fmt.Fprintf(b, "%s  lastProbeTime: %q\n", ind, probe)
}

func isReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
