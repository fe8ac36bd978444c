package chainsaw

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pod is an inline pod for the default cluster (examples/graviton's
// ClusterConfig: three amd64 nodes and one tainted arm64 node).
const pod = `
    - apply:
        resource:
          apiVersion: v1
          kind: Pod
          metadata: {name: p, labels: {app: p}}
          spec:
            nodeSelector: {kubernetes.io/arch: %ARCH%}
            containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
`

func runYAML(t *testing.T, body string) TestResult {
	t.Helper()
	return runFiles(t, body, nil)
}

// runFiles runs a test whose directory also holds files.
func runFiles(t *testing.T, body string, files map[string]string) TestResult {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "chainsaw-test.yaml")
	doc := "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\nspec:\n" + body
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	res := RunFile(file, Options{Seed: 1})
	if res.Err != "" {
		t.Fatal(res.Err)
	}
	return res.Tests[0]
}

func TestRun(t *testing.T) {
	tests := []struct {
		name string
		body string
		// failures per step: "" passes, "skip" was skipped, else a
		// substring of the failure.
		want []string
		// virtual is the virtual time at the end of the first step, when set.
		virtual time.Duration
	}{
		{name: "apply, assert and error pass", body: `
  steps:
  - try:` + strings.ReplaceAll(pod, "%ARCH%", "amd64") + `
    - assert: {resource: {apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Running}}}
    - error: {resource: {apiVersion: v1, kind: Pod, metadata: {labels: {app: p}}, status: {phase: Pending}}}
`, want: []string{""}},
		{name: "assert times out after its virtual timeout", body: `
  timeouts: {assert: 1m}
  steps:
  - try:` + strings.ReplaceAll(pod, "%ARCH%", "s390x") + `
    - assert: {resource: {apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Running}}, timeout: 20s}
  - try:
    - sleep: {duration: 1s}
`, want: []string{"status.phase: expected \"Running\", got \"Pending\"\n(still failing after 20s of virtual time)", "skip"}, virtual: 23 * time.Second},
		{name: "test timeout applies when the operation has none", body: `
  timeouts: {assert: 7s}
  steps:
  - try:` + strings.ReplaceAll(pod, "%ARCH%", "s390x") + `
    - assert: {resource: {apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Running}}}
`, want: []string{"after 7s of virtual time"}, virtual: 10 * time.Second},
		{name: "error fails while a match exists", body: `
  steps:
  - timeouts: {error: 2s}
    try:` + strings.ReplaceAll(pod, "%ARCH%", "amd64") + `
    - error: {resource: {apiVersion: v1, kind: Pod, metadata: {name: p}}}
`, want: []string{"unexpected resource found: default/pod/p matches"}},
		{name: "sleep advances virtual time", body: `
  steps:
  - try:` + strings.ReplaceAll(pod, "%ARCH%", "amd64") + `
    - sleep: {duration: 1h}
`, want: []string{""}, virtual: time.Hour + 3*time.Second},
		{name: "delete by name", body: `
  steps:
  - try:` + strings.ReplaceAll(pod, "%ARCH%", "amd64") + `
    - delete: {ref: {apiVersion: v1, kind: Pod, name: p}}
    - error: {resource: {apiVersion: v1, kind: Pod, metadata: {name: p}}}
`, want: []string{""}},
		{name: "deleting a missing object fails", body: `
  steps:
  - try:
    - delete: {ref: {apiVersion: apps/v1, kind: Deployment, name: nope}}
`, want: []string{`Error from server (NotFound): deployments.apps "nope" not found`}},
		{name: "berth checks", body: `
  steps:
  - try:` + strings.ReplaceAll(pod, "%ARCH%", "s390x") + `
    - berth:
        nodes: [{nodeGroup: default, count: 3}, {nodeGroup: graviton, count: 1}]
        maxCostPerHour: 1
        event: {reason: FailedScheduling, object: pod/p, message: "didn't match Pod's node affinity/selector"}
`, want: []string{""}},
		{name: "unknown kind", body: `
  steps:
  - try:
    - assert: {resource: {apiVersion: example.com/v1, kind: Widget}}
`, want: []string{`no matches for kind "Widget" in version "example.com/v1"`}},
		{name: "script is refused", body: `
  steps:
  - try:
    - command: {entrypoint: kubectl}
`, want: []string{"try[0] command: not supported offline"}},
		{name: "an inline resource's error names no temporary path", body: `
  steps:
  - try:
    - apply: {resource: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: []}}}
`, want: []string{"try[0] apply: inline-1.yaml"}},
		{name: "patch is refused", body: `
  steps:
  - try:
    - patch: {file: x.yaml}
`, want: []string{"berth test has no patch operation"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runYAML(t, tc.body)
			if len(res.Steps) != len(tc.want) {
				t.Fatalf("%d steps, want %d", len(res.Steps), len(tc.want))
			}
			for i, s := range res.Steps {
				switch w := tc.want[i]; {
				case w == "skip":
					if !s.Skipped {
						t.Errorf("step %d ran, want skipped", i)
					}
				case w == "":
					if s.Failure != "" || s.Skipped {
						t.Errorf("step %d: %q, want a pass", i, s.Failure)
					}
				case !strings.Contains(s.Failure, w):
					t.Errorf("step %d failure:\n%s\nwant it to contain:\n%s", i, s.Failure, w)
				}
			}
			if tc.virtual != 0 && res.Steps[0].Virtual != tc.virtual {
				t.Errorf("virtual time %s, want %s", res.Steps[0].Virtual, tc.virtual)
			}
		})
	}
}

func TestRunFiles(t *testing.T) {
	files := map[string]string{
		"10-pod.yaml": strings.ReplaceAll(`apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: p}}
spec:
  nodeSelector: {kubernetes.io/arch: amd64}
  containers: [{name: c, image: busybox}]
`, "\t", ""),
		"assert-running.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Running}\n",
		"assert-node.yaml":    "apiVersion: v1\nkind: Node\nmetadata: {labels: {kubernetes.io/arch: amd64}}\n---\napiVersion: v1\nkind: Node\nmetadata: {labels: {kubernetes.io/arch: arm64}}\n",
		"no-such.yaml":        "apiVersion: v1\nkind: Pod\nmetadata: {labels: {app: nobody}}\n",
	}
	res := runFiles(t, `
  steps:
  - try:
    - apply: {file: "*-pod.yaml"}
    - assert: {file: "assert-*.yaml"}
  - try:
    - assert: {file: no-such.yaml, timeout: 0s}
`, files)
	if res.Steps[0].Failure != "" {
		t.Errorf("step 1: %s", res.Steps[0].Failure)
	}
	if want := "v1 Pod default/(any): no actual resource found"; !strings.Contains(res.Steps[1].Failure, want) {
		t.Errorf("step 2: %q, want %q", res.Steps[1].Failure, want)
	}
}

func TestJUnit(t *testing.T) {
	files := []FileResult{
		{File: "a.yaml", Tests: []TestResult{{Name: "t", Steps: []StepResult{
			{Name: "one"},
			{Name: "two", Failure: "try[0] assert: x\n  a.b: expected 1, got 2"},
			{Name: "three", Skipped: true},
		}}}},
		{File: "b.yaml", Err: "b.yaml: not a test"},
	}
	var b bytes.Buffer
	if err := WriteJUnit(&b, files); err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1" errors="1" skipped="1">
  <testsuite name="a.yaml" tests="3" failures="1" errors="0" skipped="1" time="0">
    <testcase name="one" classname="t" time="0"></testcase>
    <testcase name="two" classname="t" time="0">
      <failure message="try[0] assert: x">try[0] assert: x&#xA;  a.b: expected 1, got 2</failure>
    </testcase>
    <testcase name="three" classname="t" time="0">
      <skipped message="an earlier step failed"></skipped>
    </testcase>
  </testsuite>
  <testsuite name="b.yaml" tests="1" failures="0" errors="1" skipped="0" time="0">
    <testcase name="parse" classname="b.yaml" time="0">
      <error message="b.yaml: not a test">b.yaml: not a test</error>
    </testcase>
  </testsuite>
</testsuites>
`
	if b.String() != want {
		t.Errorf("junit:\n%s\nwant:\n%s", b.String(), want)
	}
}
