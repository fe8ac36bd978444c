package instancetype

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

func reqs(rs ...*scheduling.Requirement) scheduling.Requirements {
	return scheduling.NewRequirements(rs...)
}

func names(its InstanceTypes) string {
	var out []string
	for _, it := range its {
		out = append(out, it.Name)
	}
	return strings.Join(out, " ")
}

// pick returns the named types from a fresh us-east-1 list, in that order.
func pick(t testing.TB, nc NodeClassOptions, uo *UnavailableOfferings, want ...string) InstanceTypes {
	all := List("us-east-1", ZonesOf("us-east-1a", "us-east-1b"), nc, nil, uo, t0)
	var out InstanceTypes
	for _, n := range want {
		out = append(out, byName(t, all, n))
	}
	return out
}

func TestOrderByPrice(t *testing.T) {
	uo := NewUnavailableOfferings()
	// c5.large is out on spot in both zones: on a spot-only order it goes
	// last (no compatible offering; ties broken by name).
	uo.MarkUnavailable("c5.large", "us-east-1a", "spot", t0)
	uo.MarkUnavailable("c5.large", "us-east-1b", "spot", t0)
	tests := []struct {
		name string
		reqs scheduling.Requirements
		want string
	}{
		// us-east-1 on-demand: t3.micro 0.0104, t3a.micro 0.0094, m5.large 0.096, c5.large 0.085, m6g.large 0.077.
		// Spot (0.7x) is the cheapest offering, except for c5.large whose spot is out.
		{"any", reqs(), "t3a.micro t3.micro m6g.large m5.large c5.large"},
		{"on-demand only", reqs(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand")),
			"t3a.micro t3.micro m6g.large c5.large m5.large"},
		{"spot only", reqs(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot")),
			"t3a.micro t3.micro m6g.large m5.large c5.large"},
		{"no offering matches", reqs(scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "us-east-1f")),
			"c5.large m5.large m6g.large t3.micro t3a.micro"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			its := pick(t, NodeClassOptions{}, uo, "m5.large", "c5.large", "t3.micro", "m6g.large", "t3a.micro")
			if got := names(its.OrderByPrice(tt.reqs)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCompatible(t *testing.T) {
	uo := NewUnavailableOfferings()
	uo.MarkUnavailable("m5.large", "us-east-1a", "on-demand", t0)
	its := pick(t, NodeClassOptions{SubnetZones: ZonesOf("us-east-1a")}, uo, "m5.large", "c5.large", "m6g.large")
	od := reqs(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand"))
	if got := names(its.Compatible(od)); got != "c5.large m6g.large" {
		t.Errorf("on-demand compatible: %s", got)
	}
	// Instance-type keys are judged by requirements, not offerings: Compatible
	// looks at offerings only (zone, capacity type), as upstream.
	b := reqs(scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "us-east-1b"))
	if got := names(its.Compatible(b)); got != "" {
		t.Errorf("us-east-1b outside the subnets, got %s", got)
	}
}

func minValues(key string, n int, values ...string) *scheduling.Requirement {
	op := corev1.NodeSelectorOpIn
	if len(values) == 0 {
		op = corev1.NodeSelectorOpExists
	}
	return scheduling.NewRequirementWithFlexibility(key, op, &n, values...)
}

func TestSatisfiesMinValues(t *testing.T) {
	its := pick(t, NodeClassOptions{}, nil, "c5.large", "c5.xlarge", "m5.large", "m5.xlarge", "r5.large")
	tests := []struct {
		name      string
		reqs      scheduling.Requirements
		needed    int
		short     map[string]int
		errSubstr string
	}{
		{"no minValues", reqs(), 0, nil, ""},
		{"families", reqs(minValues(scheduling.LabelInstanceFamily, 2)), 3, nil, ""},
		{"types", reqs(minValues(corev1.LabelInstanceTypeStable, 5)), 5, nil, ""},
		{"too many families", reqs(minValues(scheduling.LabelInstanceFamily, 4), minValues(scheduling.LabelInstanceCPU, 9)), 5,
			map[string]int{scheduling.LabelInstanceFamily: 3, scheduling.LabelInstanceCPU: 2},
			`minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-cpu karpenter.k8s.aws/instance-family])`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, short, err := its.SatisfiesMinValues(tt.reqs)
			if n != tt.needed || len(short) != len(tt.short) {
				t.Errorf("needed %d short %v, want %d %v", n, short, tt.needed, tt.short)
			}
			for k, v := range tt.short {
				if short[k] != v {
					t.Errorf("short[%s] = %d, want %d", k, short[k], v)
				}
			}
			if (err == nil) != (tt.errSubstr == "") || (err != nil && err.Error() != tt.errSubstr) {
				t.Errorf("err = %v, want %q", err, tt.errSubstr)
			}
		})
	}
	if n, _, err := (InstanceTypes{}).SatisfiesMinValues(reqs(minValues(scheduling.LabelInstanceFamily, 2))); n != 0 || err != nil {
		t.Errorf("empty list: %d %v (upstream: 0, nil)", n, err)
	}
}

func TestTruncate(t *testing.T) {
	// On-demand us-east-1: c5.large 0.085, m5.large 0.096, r5.large 0.126, c5.xlarge 0.17, m5.xlarge 0.192.
	tests := []struct {
		name    string
		reqs    scheduling.Requirements
		max     int
		want    string
		wantErr string
	}{
		{"cheapest two", reqs(), 2, "c5.large m5.large", ""},
		{"max beyond length", reqs(), 9, "c5.large m5.large r5.large c5.xlarge m5.xlarge", ""},
		{"minValues kept", reqs(minValues(scheduling.LabelInstanceFamily, 3)), 3, "c5.large m5.large r5.large", ""},
		{"minValues broken", reqs(minValues(scheduling.LabelInstanceFamily, 3)), 2, "c5.large m5.large r5.large c5.xlarge m5.xlarge",
			`validating minValues, minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-family])`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			its := pick(t, NodeClassOptions{}, nil, "m5.xlarge", "c5.xlarge", "r5.large", "m5.large", "c5.large")
			got, err := its.Truncate(tt.reqs, tt.max)
			if names(got) != tt.want {
				t.Errorf("got  %s\nwant %s", names(got), tt.want)
			}
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
