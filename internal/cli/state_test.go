package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-sim/berth/internal/cluster"
)

// newClusterState applies the example ClusterConfig to a fresh state and
// returns the directory.
func newClusterState(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var out bytes.Buffer
	if code := Run([]string{"--state", dir, "apply", "-f", "../../examples/graviton/cluster.yaml"}, nil, &out, &out); code != 0 {
		t.Fatalf("setting up the state: %s", out.String())
	}
	return dir
}

// legacyState returns the state in dir as the state.json of berth before
// the state database.
func legacyState(t *testing.T, dir string) []byte {
	t.Helper()
	s, err := cluster.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := s.SaveLegacyJSON(out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, cluster.LegacyStateFile))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDamagedState writes damaged state files and runs readers and writers
// against each: every command must fail with exit status 1 and the same
// message naming the bad entry, never panic, and leave the file as it was.
func TestDamagedState(t *testing.T) {
	good := legacyState(t, newClusterState(t))
	// edit returns the good state with f applied to its decoded form.
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	obj := func(m map[string]any, field string) map[string]any { return m[field].(map[string]any) }
	aPod := func(m map[string]any) map[string]any {
		for _, p := range obj(m, "pods") {
			return p.(map[string]any)
		}
		t.Fatal("no pods in the state")
		return nil
	}
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"truncated", "$STATE/state.json: not a berth state file: the file is truncated (unexpected end of JSON input)", good[:len(good)/2]},
		{"empty", "$STATE/state.json: not a berth state file: the file is truncated (unexpected end of JSON input)", []byte{}},
		{"top-level null", "$STATE/state.json: not a berth state file: the top level is null, not an object", []byte("null")},
		{"top-level array", "$STATE/state.json: not a berth state file: json: cannot unmarshal array into Go value of type map[string]json.RawMessage", []byte("[]")},
		{"no formatVersion", "$STATE/state.json: not a berth state file: no formatVersion",
			edit(func(m map[string]any) { delete(m, "formatVersion") })},
		{"formatVersion string", `$STATE/state.json: formatVersion is "1", not a number`,
			edit(func(m map[string]any) { m["formatVersion"] = "1" })},
		{"unknown formatVersion", "$STATE/state.json: state format version 99, this berth reads version 1 (run `berth reset`)",
			edit(func(m map[string]any) { m["formatVersion"] = 99 })},
		{"info null", "$STATE/state.json: info is missing or null: the cluster's Kubernetes version is unknown",
			edit(func(m map[string]any) { m["info"] = nil })},
		{"bad version", `$STATE/state.json: info.kubernetesVersion: invalid Kubernetes version "banana": want MAJOR.MINOR or MAJOR.MINOR.PATCH`,
			edit(func(m map[string]any) { obj(m, "info")["kubernetesVersion"] = "banana" })},
		{"pod null", `$STATE/state.json: pods["default/web"] is null`,
			edit(func(m map[string]any) { obj(m, "pods")["default/web"] = nil })},
		{"node null", `$STATE/state.json: nodes["ip-10-42-1-1"] is null`,
			edit(func(m map[string]any) { obj(m, "nodes")["ip-10-42-1-1"] = nil })},
		{"event null", `$STATE/state.json: events[0] is null`,
			edit(func(m map[string]any) { m["events"].([]any)[0] = nil })},
		{"queue entry null", `$STATE/state.json: scheduler.queue["default/web"] is null`,
			edit(func(m map[string]any) { obj(m, "scheduler")["queue"] = map[string]any{"default/web": nil} })},
		{"pods wrong type", "$STATE/state.json: json: cannot unmarshal array into Go struct field State.pods of type map[string]*v1.Pod",
			edit(func(m map[string]any) { m["pods"] = []any{} })},
		{"field wrong type", "$STATE/state.json: json: cannot unmarshal string into Go struct field PodSpec.pods.spec.containers of type []v1.Container",
			edit(func(m map[string]any) { aPod(m)["spec"].(map[string]any)["containers"] = "nginx" })},
		{"key mismatch", `$STATE/state.json: pods["default/web"] holds an object whose namespace/name is "default/other"`,
			edit(func(m map[string]any) {
				p := aPod(m)
				meta := p["metadata"].(map[string]any)
				meta["namespace"], meta["name"] = "default", "other"
				obj(m, "pods")["default/web"] = p
			})},
		{"cluster-scoped key mismatch", `$STATE/state.json: namespaces["shop"] holds an object whose name is "default"`,
			edit(func(m map[string]any) { obj(m, "namespaces")["shop"] = obj(m, "namespaces")["default"] })},
		{"no name", `$STATE/state.json: pods["default/web"] has no metadata.name`,
			edit(func(m map[string]any) { obj(m, "pods")["default/web"] = map[string]any{"metadata": map[string]any{}} })},
		{"time before epoch", "$STATE/state.json: now is 2000-01-01T00:00:00Z, before virtual time zero (2026-01-01T00:00:00Z)",
			edit(func(m map[string]any) { m["now"] = "2000-01-01T00:00:00Z" })},
	}
	commands := [][]string{
		{"get", "pods", "-A"},
		{"describe", "pods", "-A"},
		{"events", "-A"},
		{"advance", "1m"},
		{"apply", "-f", "testdata/manifests/pinned-pod.yaml"},
		{"cordon", "ip-10-42-112-200.us-west-2.compute.internal"},
		{"drain", "ip-10-42-112-200.us-west-2.compute.internal"},
		{"rollout", "status", "deployment/web"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range commands {
				var out, errOut bytes.Buffer
				code := Run(append([]string{"--state", dir}, cmd...), nil, &out, &errOut)
				got := strings.ReplaceAll(strings.TrimSpace(errOut.String()), dir, "$STATE")
				if code != 1 || got != "error: "+c.want || out.Len() != 0 {
					t.Errorf("berth %s: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and:\nerror: %s", strings.Join(cmd, " "), code, out.String(), got, c.want)
				}
				if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, c.data) {
					t.Errorf("berth %s changed the state file", strings.Join(cmd, " "))
				}
			}
		})
	}
}
