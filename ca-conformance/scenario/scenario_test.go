package scenario

import (
	"strings"
	"testing"
)

const valid = `
name: s
options: {expander: priority, priorities: {10: ["^a$"], 5: [".*"]}}
nodeGroups:
- {name: a, min: 0, max: 3, template: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}}
- {name: b, min: 1, max: 3, size: 2}
nodes:
- {name: n1, group: b, capacity: {cpu: "2"}, pods: [{name: p0, owner: ReplicaSet}]}
- {name: n2, capacity: {cpu: "2"}}
pods:
- {name: p1, requests: {cpu: 500m}, tolerations: [{key: role, operator: Exists}]}
`

func TestParse(t *testing.T) {
	s, err := Parse([]byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Options.Priorities[10]; len(got) != 1 || got[0] != "^a$" {
		t.Errorf("priorities = %v", s.Options.Priorities)
	}
	for _, tc := range []struct {
		group string
		size  int
	}{{"a", 0}, {"b", 2}} {
		if got, ok := s.GroupSize(tc.group); !ok || got != tc.size {
			t.Errorf("GroupSize(%s) = %d, %v; want %d", tc.group, got, ok, tc.size)
		}
	}
	if _, ok := s.GroupSize("zz"); ok {
		t.Errorf("GroupSize of an unknown group succeeded")
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"unknown field", "name: s", "name: s\nbogus: 1", "unknown field"},
		{"unknown group", "group: b,", "group: c,", `unknown node group "c"`},
		{"size past max", "size: 2", "size: 4", "size 4 outside [1, 3]"},
		{"no template", "max: 3, template: {capacity: {cpu: \"2\", memory: 4Gi, pods: \"110\"}}", "max: 3", `"a": no node and no template`},
		{"duplicate pod", "name: p1,", "name: p0,", `pod "default/p0"`},
		{"min above max", "min: 0, max: 3", "min: 4, max: 3", "min 4, max 3"},
	} {
		text := strings.Replace(valid, tc.from, tc.to, 1)
		if text == valid {
			t.Fatalf("%s: %q not in the scenario", tc.name, tc.from)
		}
		_, err := Parse([]byte(text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	o := Options{}.Defaults()
	if o.Expander != "least-waste" || o.MaxCoresTotal != 320000 || o.ScaleDownUtilizationThreshold != 0.5 ||
		!*o.SkipNodesWithSystemPods || !*o.SkipNodesWithLocalStorage || *o.ExpendablePodsPriorityCutoff != -10 {
		t.Errorf("Defaults = %+v", o)
	}
	if got, want := o.MaxMemoryTotal.Value(), int64(6400000)<<30; got != want {
		t.Errorf("memory total = %d, want %d", got, want)
	}
	no := false
	o = Options{Expander: "most-pods", SkipNodesWithSystemPods: &no}.Defaults()
	if o.Expander != "most-pods" || *o.SkipNodesWithSystemPods {
		t.Errorf("Defaults overwrote set options: %+v", o)
	}
}
