package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
)

// open opens the app on dir for one command, as the CLI does.
func open(t *testing.T, dir string) (*App, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	a, err := Open(Options{StateDir: dir, Seed: 1, Out: &out, ErrOut: &out})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, &out
}

func writeManifest(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const twoNodes = `apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {kubernetes.io/hostname: n1}
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "10"}
  capacity: {cpu: "2", memory: 4Gi, pods: "10"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata:
  name: n2
  labels: {kubernetes.io/hostname: n2}
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "10"}
  capacity: {cpu: "2", memory: 4Gi, pods: "10"}
  conditions: [{type: Ready, status: "True"}]
`

const webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        resources: {requests: {cpu: 500m}}
`

// TestApplySettlesAndSaves: apply runs the controllers until the cluster
// settles, saves the result, and prints kubectl's lines only then.
func TestApplySettlesAndSaves(t *testing.T) {
	dir := t.TempDir()
	a, out := open(t, dir)
	if err := a.Apply(ApplyRequest{Files: []string{writeManifest(t, "nodes.yaml", twoNodes), writeManifest(t, "web.yaml", webDeployment)}}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if got, want := out.String(), "node/n1 created\nnode/n2 created\ndeployment.apps/web created\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	s, err := cluster.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range s.Pods {
		if p.Status.Phase == "Running" && p.Spec.NodeName != "" {
			running++
		}
	}
	if running != 3 {
		t.Fatalf("%d pods Running in the saved state, want 3", running)
	}
	if s.Now.Equal(cluster.Epoch) {
		t.Fatalf("virtual time did not move while pods started")
	}
}

// TestFailedApplyChangesNothing: a manifest whose second document is bad
// leaves the saved state exactly as it was, first document included.
func TestFailedApplyChangesNothing(t *testing.T) {
	dir := t.TempDir()
	a, _ := open(t, dir)
	if err := a.Apply(ApplyRequest{Files: []string{writeManifest(t, "nodes.yaml", twoNodes)}}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	before, err := os.ReadFile(filepath.Join(dir, cluster.StateDB))
	if err != nil {
		t.Fatal(err)
	}
	bad := webDeployment + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: broken}\nspec:\n  containers:\n  - name: c\n    image: x\n    resources: {requests: {cpu: lots}}\n"
	a, _ = open(t, dir)
	err = a.Apply(ApplyRequest{Files: []string{writeManifest(t, "bad.yaml", bad)}})
	if err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Fatalf("apply error %v, want one naming bad.yaml", err)
	}
	a.Close()
	after, err := os.ReadFile(filepath.Join(dir, cluster.StateDB))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatalf("a failed apply changed the saved state")
	}
}

// TestFailedCommandRestoresTheApp: commands change the loaded state in
// place; after one fails, the same App holds the saved state again (berth
// test runs its steps on one App) and the next command starts from it.
func TestFailedCommandRestoresTheApp(t *testing.T) {
	dir := t.TempDir()
	a, _ := open(t, dir)
	defer a.Close()
	if err := a.Apply(ApplyRequest{Files: []string{writeManifest(t, "nodes.yaml", twoNodes)}}); err != nil {
		t.Fatal(err)
	}
	now := a.State().Now
	// The deployment is applied to the state before the pod's missing
	// namespace fails the command.
	bad := webDeployment + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: nope}\nspec:\n  containers: [{name: c, image: x}]\n"
	if err := a.Apply(ApplyRequest{Files: []string{writeManifest(t, "bad.yaml", bad)}}); err == nil || !strings.Contains(err.Error(), `namespaces "nope" not found`) {
		t.Fatalf("apply error %v, want the missing namespace", err)
	}
	if err := a.Cordon([]string{"n1", "no-such-node"}, true); err == nil {
		t.Fatal("cordoning a missing node succeeded")
	}
	s := a.State()
	if _, ok := s.Deployments["default/web"]; ok || s.Nodes["n1"].Spec.Unschedulable || !s.Now.Equal(now) {
		t.Fatalf("the App kept a failed command's changes: web %v, n1 cordoned %v, now %v (was %v)",
			ok, s.Nodes["n1"].Spec.Unschedulable, s.Now, now)
	}
	if err := a.Cordon([]string{"n1"}, true); err != nil {
		t.Fatal(err)
	}
	saved, err := cluster.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !saved.Nodes["n1"].Spec.Unschedulable || len(saved.Deployments) != 0 {
		t.Fatalf("saved state after the failures and a cordon is wrong")
	}
}

// TestAdvanceMovesTheClock: advance fires timers on the way and leaves the
// clock exactly where it was asked to.
func TestAdvanceMovesTheClock(t *testing.T) {
	dir := t.TempDir()
	a, _ := open(t, dir)
	if err := a.Apply(ApplyRequest{Files: []string{writeManifest(t, "nodes.yaml", twoNodes)}}); err != nil {
		t.Fatal(err)
	}
	start := a.State().Now
	a.Close()
	a, _ = open(t, dir)
	if err := a.Advance(90 * time.Minute); err != nil {
		t.Fatal(err)
	}
	a.Close()
	s, err := cluster.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Now.Sub(start); got != 90*time.Minute {
		t.Fatalf("clock moved %v, want 1h30m", got)
	}
}

// TestDeleteCascades: deleting a Deployment removes its ReplicaSet and pods
// (background cascading deletion).
func TestDeleteCascades(t *testing.T) {
	dir := t.TempDir()
	a, _ := open(t, dir)
	if err := a.Apply(ApplyRequest{Files: []string{writeManifest(t, "nodes.yaml", twoNodes), writeManifest(t, "web.yaml", webDeployment)}}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	a, out := open(t, dir)
	if err := a.Delete(DeleteRequest{Args: []string{"deployment", "web"}}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if got := out.String(); got != "deployment.apps \"web\" deleted\n" {
		t.Fatalf("output %q", got)
	}
	s, err := cluster.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 0 || len(s.ReplicaSets) != 0 {
		t.Fatalf("after delete: %d pods, %d replicasets; want none", len(s.Pods), len(s.ReplicaSets))
	}
}
