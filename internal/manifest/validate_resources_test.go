package manifest

import (
	"strings"
	"testing"
)

// TestValidateQuantitiesAndClasses covers the API server's rules on resource
// values (ValidateResourceQuantityValue, validateResourceRequirements,
// ValidateNodeResources) and on PriorityClass values and names.
func TestValidateQuantitiesAndClasses(t *testing.T) {
	res := func(r string) string {
		return podHead + "  containers: [{name: c, image: nginx, resources: " + r + "}]\n"
	}
	node := "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus:\n"
	pc := "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\n"
	tests := []struct {
		name, doc string
		want      []string
	}{
		// The API server has no upper bound: these are valid pods.
		{name: "huge memory", doc: res("{requests: {memory: 1e100}}")},
		{name: "huge cpu", doc: res("{requests: {cpu: 1e100}}")},
		{name: "huge gpu count", doc: res(`{requests: {nvidia.com/gpu: "1e30"}, limits: {nvidia.com/gpu: "1e30"}}`)},
		{name: "fractional gpu", doc: res(`{requests: {nvidia.com/gpu: 0.5}, limits: {nvidia.com/gpu: 0.5}}`), want: []string{
			`(Pod p): spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer`,
			`(Pod p): spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer`,
		}},
		{name: "gpu without limit", doc: res(`{requests: {nvidia.com/gpu: 1}}`), want: []string{
			`(Pod p): spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources`,
		}},
		{name: "gpu request below limit", doc: res(`{requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}`), want: []string{
			`(Pod p): spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2`,
		}},
		{name: "negative allocatable", doc: node + "  capacity: {cpu: 2, pods: 110}\n  allocatable: {cpu: -1, memory: -1Gi, pods: 1.5}\n", want: []string{
			`(Node node-a): status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0`,
			`(Node node-a): status.allocatable.memory: Invalid value: "-1Gi": must be greater than or equal to 0`,
			`(Node node-a): status.allocatable.pods: Invalid value: "1500m": must be an integer`,
		}},
		{name: "user class at the limit", doc: strings.Replace(pc, "%s", "top", 1) + "value: 1000000000\n"},
		{name: "user class above the limit", doc: strings.Replace(pc, "%s", "top", 1) + "value: 1000000001\n", want: []string{
			`(PriorityClass top): value: Forbidden: maximum allowed value of a user defined priority is 1000000000`,
		}},
		{name: "built-in class as defined", doc: strings.Replace(pc, "%s", "system-node-critical", 1) + "value: 2000001000\n"},
		{name: "built-in class redefined", doc: strings.Replace(pc, "%s", "system-node-critical", 1) + "value: 5\n", want: []string{
			`(PriorityClass system-node-critical): metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000`,
		}},
		{name: "unknown system class", doc: strings.Replace(pc, "%s", "system-mine", 1) + "value: 5\n", want: []string{
			`(PriorityClass system-mine): metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Decode("v.yaml", []byte(tt.doc))
			if err != nil || len(objs) != 1 {
				t.Fatalf("decode: %d objects, %v", len(objs), err)
			}
			var got []string
			if err := Validate(objs[0]); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if want := prefix + tt.want[i]; got[i] != want {
					t.Errorf("error %d\n  got  %s\n  want %s", i, got[i], want)
				}
			}
		})
	}
}
