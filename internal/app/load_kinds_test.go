package app

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
)

// TestEveryKindReadsTheSameInPart: for every kind get serves, `get` prints
// the same tables, YAML and errors whether the state is loaded whole or in
// the part its scope names, and so does `describe` of every pod and node by
// name; the cluster is the Karpenter example with a StatefulSet and its
// volumes, so most kinds hold objects. A printer that starts reading
// another kind fails here until its kind's scope says so.
func TestEveryKindReadsTheSameInPart(t *testing.T) {
	dir := t.TempDir()
	a, _ := open(t, dir)
	ex := filepath.Join("..", "..", "examples", "karpenter")
	var files []string
	for _, f := range []string{"cluster.yaml", "nodepool.yaml", "storageclass.yaml", "inflate-affinity.yaml", "statefulset.yaml"} {
		files = append(files, filepath.Join(ex, f))
	}
	if err := a.Apply(ApplyRequest{Files: files}); err != nil {
		t.Fatal(err)
	}
	if err := a.Advance(time.Minute); err != nil {
		t.Fatal(err)
	}
	s := a.State()
	pods, nodes := cluster.SortedKeys(s.Pods), cluster.SortedKeys(s.Nodes)
	a.Close()
	run := func(scope ReadScope, f func(a *App) error) string {
		var out bytes.Buffer
		a, err := Open(Options{StateDir: dir, Out: &out, ErrOut: &out, ReadOnly: true, Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if err := f(a); err != nil {
			out.WriteString("error: " + err.Error())
		}
		return out.String()
	}
	filled := 0
	for _, k := range cluster.ServedKinds() {
		for _, args := range [][]string{{k.Resource}, {k.Resource, "nosuch"}} {
			for _, output := range []string{"wide", "yaml"} {
				if len(args) > 1 && output == "yaml" {
					continue
				}
				get := func(a *App) error { return a.Get(GetRequest{Args: args, AllNamespaces: true, Output: output}) }
				whole, part := run(ReadScope{}, get), run(GetScope(args), get)
				if whole != part {
					t.Errorf("get %v -o %s loaded in part:\n%s\nwhole:\n%s", args, output, part, whole)
				}
				if len(args) == 1 && output == "wide" && !strings.HasPrefix(whole, "No resources") {
					filled++
				}
			}
		}
	}
	if filled < 10 {
		t.Errorf("only %d kinds hold objects: the test cluster no longer covers the printers", filled)
	}
	// Pods of a few kinds of owner (DaemonSet, Deployment, StatefulSet,
	// bare), and every node.
	var describes [][]string
	for i := 0; i < len(pods); i += max(1, len(pods)/8) {
		ns, name, _ := strings.Cut(pods[i], "/")
		describes = append(describes, []string{"pod", name, "-n=" + ns})
	}
	for _, n := range nodes {
		describes = append(describes, []string{"node/" + n})
	}
	describes = append(describes, []string{"node", nodes[0], "nosuch"}, []string{"pod", "nosuch"})
	for _, args := range describes {
		r := DescribeRequest{Args: args}
		if ns, ok := strings.CutPrefix(args[len(args)-1], "-n="); ok {
			r = DescribeRequest{Args: args[:len(args)-1], Namespace: ns}
		}
		describe := func(a *App) error { return a.Describe(r) }
		if whole, part := run(ReadScope{}, describe), run(DescribeScope(r), describe); whole != part {
			t.Errorf("describe %v loaded in part:\n%s\nwhole:\n%s", args, part, whole)
		}
	}
}
