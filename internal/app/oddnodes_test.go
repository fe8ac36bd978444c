package app

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// TestOddNodesApply applies Node manifests from other clusters — no labels,
// odd zones, no or unparsable addresses, IPv6, a /8 and a /30 podCIDR, zero
// allocatable, Fargate, NotReady — and pods bound to them every way. Every
// apply must succeed; whatever fails for a node or a pod shows on it.
func TestOddNodesApply(t *testing.T) {
	var out, errOut bytes.Buffer
	opts := Options{StateDir: t.TempDir(), Seed: 1, Out: &out, ErrOut: &errOut}
	for _, f := range []string{"testdata/odd-nodes.yaml", "testdata/odd-pods.yaml"} {
		a, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Apply(ApplyRequest{Files: []string{f}}); err != nil {
			t.Fatalf("apply %s: %v", f, err)
		}
		a.Close() // the next Open locks the state again
	}
	if strings.Contains(errOut.String(), "bundled example") {
		t.Errorf("Node manifests alone brought in the example cluster: %s", errOut.String())
	}
	a, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s := a.State()
	if s.Info.Name != "" || s.Info.Region != "" || len(s.Info.Zones) != 0 || s.Info.VPCCIDR != "" {
		t.Errorf("state adopted a cluster: %+v", s.Info)
	}
	if len(s.NodeGroups) != 0 {
		t.Errorf("state has node groups %v", s.NodeGroups)
	}
	ips := map[string]string{}
	waiting := 0
	for _, k := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[k]
		node := s.Nodes[p.Spec.NodeName]
		switch {
		case node == nil || p.Status.StartTime == nil || p.Status.Phase == corev1.PodFailed:
			continue // unscheduled, on a missing or NotReady node, or rejected
		case p.Status.PodIP == "":
			if p.Spec.HostNetwork || hasEvent(s, p, "FailedCreatePodSandBox") || usesClaim(p) {
				waiting++
				continue
			}
			t.Errorf("pod %s on %s has no IP and no event saying why", k, node.Name)
		default:
			if other, dup := ips[p.Status.PodIP]; dup {
				t.Errorf("pods %s and %s share %s", other, k, p.Status.PodIP)
			}
			ips[p.Status.PodIP] = k
			if cidr := node.Spec.PodCIDR; cidr != "" && len(node.Spec.PodCIDRs) == 0 {
				if !netip.MustParsePrefix(cidr).Contains(netip.MustParseAddr(p.Status.PodIP)) {
					t.Errorf("pod %s: %s outside its node's podCIDR %s", k, p.Status.PodIP, cidr)
				}
			}
		}
	}
	if waiting == 0 {
		t.Error("no pod waits for an address on the /30 node")
	}
	for _, name := range []string{"no-labels", "bad-address", "ec2-odd-zone"} {
		if s.Nodes[name].Spec.PodCIDR == "" {
			t.Errorf("node %s got no podCIDR from node IPAM", name)
		}
	}
	if len(s.CSINodes) != 0 {
		t.Errorf("EBS registered on nodes without the driver: %d CSINodes", len(s.CSINodes))
	}
	if ec2 := s.Nodes["ec2-other-region"]; ec2.Status.Allocatable.Pods().Value() != 29 {
		t.Errorf("EC2 node without status: allocatable %v, want the m5.large's", ec2.Status.Allocatable)
	}
}

func hasEvent(s *cluster.State, p *corev1.Pod, reason string) bool {
	for _, e := range s.EventsFor("Pod", p.Namespace, p.Name) {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

// usesClaim: the pod waits for its claim (no EBS driver here) before any sandbox.
func usesClaim(p *corev1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return true
		}
	}
	return false
}
