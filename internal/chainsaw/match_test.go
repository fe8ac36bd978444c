package chainsaw

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestMatch(t *testing.T) {
	actual := `
metadata:
  name: web
  labels: {app: web, tier: front}
spec:
  replicas: 3
  tolerations:
  - {key: a, effect: NoSchedule}
  - {key: b, effect: NoExecute}
status:
  readyReplicas: 3
  ratio: 0.5
  ok: true
  note: null
`
	tests := []struct {
		name     string
		expected string
		want     []string // mismatches as printed; empty: a match
		wantErr  string
	}{
		{name: "empty map matches anything", expected: `{}`},
		{name: "subset of fields", expected: `{metadata: {labels: {app: web}}, status: {readyReplicas: 3}}`},
		{name: "integer equals JSON number", expected: `{spec: {replicas: 3}, status: {ratio: 0.5}}`},
		{name: "boolean", expected: `{status: {ok: true}}`},
		{name: "expected null matches absent and null", expected: `{status: {note: null, gone: null}}`},
		{name: "value differs", expected: `{spec: {replicas: 2}}`, want: []string{`spec.replicas: expected 2, got 3`}},
		{name: "string is not a number", expected: `{spec: {replicas: "3"}}`, want: []string{`spec.replicas: expected "3", got 3`}},
		{name: "missing field", expected: `{status: {availableReplicas: 3}}`, want: []string{`status.availableReplicas: field is missing, expected 3`}},
		{name: "dotted key is quoted in the path", expected: `{metadata: {labels: {app.kubernetes.io/name: web}}}`,
			want: []string{`metadata.labels["app.kubernetes.io/name"]: field is missing, expected "web"`}},
		{name: "array element-wise subset, same length", expected: `{spec: {tolerations: [{key: a}, {key: b}]}}`},
		{name: "array order matters", expected: `{spec: {tolerations: [{key: b}, {key: a}]}}`,
			want: []string{`spec.tolerations[0].key: expected "b", got "a"`, `spec.tolerations[1].key: expected "a", got "b"`}},
		{name: "array length must be equal", expected: `{spec: {tolerations: [{key: a}]}}`,
			want: []string{`spec.tolerations: expected 1 element(s), got 2: [{"effect":"NoSchedule","key":"a"},{"effect":"NoExecute","key":"b"}]`}},
		{name: "map against scalar", expected: `{spec: {replicas: {min: 1}}}`, want: []string{`spec.replicas: expected a map, got a number`}},
		{name: "every mismatch, in path order", expected: `{status: {readyReplicas: 1, ok: false}, metadata: {name: api}}`,
			want: []string{`metadata.name: expected "api", got "web"`, `status.ok: expected false, got true`, `status.readyReplicas: expected 1, got 3`}},
		{name: "JMESPath key refused", expected: `{spec: {(replicas > 1): true}}`, wantErr: `spec: key "(replicas > 1)" is a Chainsaw expression`},
		{name: "iteration key refused", expected: `{spec: {~.tolerations: {key: a}}}`, wantErr: `key "~.tolerations"`},
	}
	var act map[string]any
	if err := yaml.Unmarshal([]byte(actual), &act); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var exp map[string]any
			if err := yaml.Unmarshal([]byte(tc.expected), &exp); err != nil {
				t.Fatal(err)
			}
			got, err := Match(exp, act)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, m := range got {
				lines = append(lines, m.String())
			}
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("mismatches:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
