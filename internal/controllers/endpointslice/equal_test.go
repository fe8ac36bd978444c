package endpointslice

import (
	"math/rand"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// TestEqualMatchesSemantic compares endpointEqual and subsetsEqual with
// apiequality.Semantic.DeepEqual over random pairs that differ in one
// field at a time (or not at all), nil and empty lists and maps included.
func TestEqualMatchesSemantic(t *testing.T) {
	// The written-out comparisons name every field; a new one must be
	// added to them.
	for typ, n := range map[reflect.Type]int{
		reflect.TypeOf(discoveryv1.Endpoint{}): 8, reflect.TypeOf(discoveryv1.EndpointConditions{}): 3,
		reflect.TypeOf(discoveryv1.EndpointHints{}): 2, reflect.TypeOf(corev1.EndpointSubset{}): 3,
		reflect.TypeOf(corev1.EndpointAddress{}): 4, reflect.TypeOf(corev1.EndpointPort{}): 4,
		reflect.TypeOf(corev1.ObjectReference{}): 7,
	} {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, endpointEqual and subsetsEqual know %d", typ, typ.NumField(), n)
		}
	}
	r := rand.New(rand.NewSource(1))
	str := func() *string {
		if r.Intn(3) == 0 {
			return nil
		}
		s := []string{"", "a", "b"}[r.Intn(3)]
		return &s
	}
	boolean := func() *bool {
		if r.Intn(3) == 0 {
			return nil
		}
		b := r.Intn(2) == 0
		return &b
	}
	ref := func() *corev1.ObjectReference {
		if r.Intn(3) == 0 {
			return nil
		}
		return &corev1.ObjectReference{Kind: "Pod", Name: []string{"a", "b"}[r.Intn(2)], UID: "u"}
	}
	list := func() []string {
		switch r.Intn(4) {
		case 0:
			return nil
		case 1:
			return []string{}
		case 2:
			return []string{"10.0.0.1"}
		}
		return []string{"10.0.0.1", "10.0.0.2"}
	}
	endpoint := func() discoveryv1.Endpoint {
		ep := discoveryv1.Endpoint{Addresses: list(), Conditions: discoveryv1.EndpointConditions{Ready: boolean(), Serving: boolean(), Terminating: boolean()},
			Hostname: str(), TargetRef: ref(), NodeName: str(), Zone: str()}
		switch r.Intn(4) {
		case 1:
			ep.DeprecatedTopology = map[string]string{}
		case 2:
			ep.DeprecatedTopology = map[string]string{"k": []string{"a", "b"}[r.Intn(2)]}
		}
		switch r.Intn(4) {
		case 1:
			ep.Hints = &discoveryv1.EndpointHints{}
		case 2:
			ep.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: []string{"a", "b"}[r.Intn(2)]}}, ForNodes: []discoveryv1.ForNode{}}
		}
		return ep
	}
	addresses := func() []corev1.EndpointAddress {
		if r.Intn(3) == 0 {
			return nil
		}
		var out []corev1.EndpointAddress
		for i := r.Intn(3); i > 0; i-- {
			out = append(out, corev1.EndpointAddress{IP: []string{"10.0.0.1", "10.0.0.2"}[r.Intn(2)], Hostname: *nonNil(str()), NodeName: str(), TargetRef: ref()})
		}
		return out
	}
	subsets := func() []corev1.EndpointSubset {
		if r.Intn(4) == 0 {
			return nil
		}
		var out []corev1.EndpointSubset
		for i := r.Intn(3); i > 0; i-- {
			ss := corev1.EndpointSubset{Addresses: addresses(), NotReadyAddresses: addresses()}
			for j := r.Intn(3); j > 0; j-- {
				ss.Ports = append(ss.Ports, corev1.EndpointPort{Name: *nonNil(str()), Port: int32(80 + r.Intn(2)), Protocol: corev1.ProtocolTCP, AppProtocol: str()})
			}
			out = append(out, ss)
		}
		return out
	}
	equal := 0
	for i := 0; i < 20000; i++ {
		a, b := endpoint(), endpoint()
		if r.Intn(2) == 0 {
			b = *a.DeepCopy()
		}
		want := apiequality.Semantic.DeepEqual(a, b)
		if got := endpointEqual(&a, &b); got != want {
			t.Fatalf("endpointEqual(%+v, %+v) = %v, Semantic says %v", a, b, got, want)
		}
		sa, sb := subsets(), subsets()
		if r.Intn(2) == 0 {
			sb = nil
			for _, ss := range sa {
				sb = append(sb, *ss.DeepCopy())
			}
		}
		wantSubsets := apiequality.Semantic.DeepEqual(sa, sb)
		if got := subsetsEqual(sa, sb); got != wantSubsets {
			t.Fatalf("subsetsEqual(%+v, %+v) = %v, Semantic says %v", sa, sb, got, wantSubsets)
		}
		if want {
			equal++
		}
	}
	if equal == 0 {
		t.Fatal("no equal pair drawn")
	}
}

func nonNil(s *string) *string {
	if s == nil {
		return new(string)
	}
	return s
}
