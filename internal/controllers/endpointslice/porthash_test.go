package endpointslice

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
)

// The memoized hashes must equal hashOf for every value, and values that
// differ only in a nil pointer or an empty string must not share a memo.
func TestPortHashesMatchHashOf(t *testing.T) {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	slicePorts := []discoveryv1.EndpointPort{
		{},
		{Name: ptr.To("")},
		{Name: ptr.To("http"), Port: ptr.To(int32(80)), Protocol: &tcp},
		{Name: ptr.To("http"), Port: ptr.To(int32(80)), Protocol: &udp},
		{Name: ptr.To("http"), Port: ptr.To(int32(80)), Protocol: &tcp, AppProtocol: ptr.To("")},
		{Name: ptr.To("http"), Port: ptr.To(int32(80)), Protocol: &tcp, AppProtocol: ptr.To("h2c")},
		{Name: ptr.To("1:a"), Port: ptr.To(int32(-5))},
		{Name: ptr.To("1"), Port: ptr.To(int32(5))},
	}
	lists := [][]discoveryv1.EndpointPort{nil, {}, slicePorts[:1], slicePorts[1:2], slicePorts[2:4], slicePorts[3:5], slicePorts}
	// Twice: the second round is answered from the memo.
	for round := 0; round < 2; round++ {
		for i, p := range slicePorts {
			if got, want := slicePortHash(p), hashOf(p); got != want {
				t.Errorf("round %d: slice port %d: %s, want %s", round, i, got, want)
			}
		}
		for i, l := range lists {
			if got, want := slicePortsHash(l), hashOf(l); got != want {
				t.Errorf("round %d: slice port list %d: %s, want %s", round, i, got, want)
			}
		}
		legacy := []corev1.EndpointPort{
			{}, {Name: "http", Port: 80, Protocol: tcp}, {Name: "http", Port: 80, Protocol: udp},
			{Name: "http", Port: 80, Protocol: tcp, AppProtocol: ptr.To("")}, {Port: 8080, AppProtocol: ptr.To("x")},
		}
		for i, p := range legacy {
			if got, want := legacyPortHash(p), hashOf(p); got != want {
				t.Errorf("round %d: legacy port %d: %s, want %s", round, i, got, want)
			}
		}
		for i, l := range [][]corev1.EndpointPort{nil, {}, legacy[:2], legacy[1:], legacy} {
			if got, want := legacyPortsHash(l), hashOf(l); got != want {
				t.Errorf("round %d: legacy port list %d: %s, want %s", round, i, got, want)
			}
		}
	}
}
