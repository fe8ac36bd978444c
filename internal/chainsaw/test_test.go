package chainsaw

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
		check   func(t *testing.T, tests []*Test)
	}{
		{name: "steps, timeouts and operations", in: `
apiVersion: chainsaw.kyverno.io/v1alpha1
kind: Test
metadata: {name: a}
spec:
  timeouts: {assert: 2m}
  steps:
  - name: one
    timeouts: {error: 5s}
    try:
    - apply: {file: x.yaml}
    - assert: {resource: {apiVersion: v1, kind: Pod}, timeout: 10s}
    - sleep: {duration: 1m30s}
    catch:
    - events: {}
---
apiVersion: chainsaw.kyverno.io/v1alpha1
kind: Test
metadata: {name: b}
spec:
  steps:
  - try:
    - berth: {nodes: [{nodePool: default, count: 2}], maxCostPerHour: 1.5}
`, check: func(t *testing.T, tests []*Test) {
			if len(tests) != 2 || tests[0].Metadata.Name != "a" || tests[1].Metadata.Name != "b" {
				t.Fatalf("tests: %+v", tests)
			}
			s := tests[0].Spec.Steps[0]
			if tests[0].Spec.Timeouts.Assert.Duration != 2*time.Minute || s.Timeouts.Error.Duration != 5*time.Second {
				t.Errorf("timeouts not read")
			}
			if s.Try[1].Assert.Timeout.Duration != 10*time.Second || s.Try[2].Sleep.Duration.Duration != 90*time.Second {
				t.Errorf("operation fields not read")
			}
			b := tests[1].Spec.Steps[0].Try[0].Berth
			if b.Nodes[0].Count != 2 || *b.MaxCostPerHour != 1.5 {
				t.Errorf("berth op not read: %+v", b)
			}
		}},
		{name: "not a test", in: "apiVersion: v1\nkind: Pod\n", wantErr: "v1 Pod is not a Chainsaw test"},
		{name: "misspelt operation", in: `
apiVersion: chainsaw.kyverno.io/v1alpha1
kind: Test
metadata: {name: a}
spec:
  steps:
  - try:
    - asert: {file: x.yaml}
`, wantErr: `unknown field "asert"`},
		{name: "two operations in one entry", in: `
apiVersion: chainsaw.kyverno.io/v1alpha1
kind: Test
metadata: {name: a}
spec:
  steps:
  - try:
    - apply: {file: x.yaml}
      assert: {file: x.yaml}
`, wantErr: "want exactly one operation, found 2"},
		{name: "bad duration", in: `
apiVersion: chainsaw.kyverno.io/v1alpha1
kind: Test
metadata: {name: a}
spec:
  steps:
  - try:
    - sleep: {duration: soon}
`, wantErr: `invalid duration "soon"`},
		{name: "name required", in: "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nspec: {steps: []}\n", wantErr: "metadata.name is required"},
		{name: "empty", in: "# nothing\n", wantErr: "no Chainsaw Test found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
}
