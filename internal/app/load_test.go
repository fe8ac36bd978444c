package app

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestReadScopes(t *testing.T) {
	nodes, pods, deploys, rs := kindOf(schema.GroupKind{Kind: "Node"}), podKind,
		kindOf(schema.GroupKind{Group: "apps", Kind: "Deployment"}), kindOf(schema.GroupKind{Group: "apps", Kind: "ReplicaSet"})
	for _, c := range []struct {
		args []string
		want ReadScope
	}{
		{[]string{"nodes"}, ReadScope{Part: true, Kinds: []*cluster.Kind{nodes}}},
		{[]string{"po,deploy"}, ReadScope{Part: true, Kinds: []*cluster.Kind{pods, deploys}}},
		{[]string{"pod/a", "node/b", "pods/c"}, ReadScope{Part: true, Kinds: []*cluster.Kind{pods, nodes}}},
		{[]string{"deploy,rs", "web"}, ReadScope{Part: true, Kinds: []*cluster.Kind{deploys, rs}}},
		{[]string{"events"}, ReadScope{}},
		{[]string{"pods,ev"}, ReadScope{}},
		{[]string{"nodegroups"}, ReadScope{}},
		{[]string{"fargateprofiles"}, ReadScope{}},
		{[]string{"all"}, ReadScope{}},
		{[]string{"nonsense"}, ReadScope{}},
	} {
		if got := GetScope(c.args); !reflect.DeepEqual(got, c.want) {
			t.Errorf("get %v: %+v, want %+v", c.args, got, c.want)
		}
	}
	for _, c := range []struct {
		r    DescribeRequest
		want ReadScope
	}{
		{DescribeRequest{Args: []string{"pod", "web-1", "web-2"}},
			ReadScope{Part: true, Kinds: []*cluster.Kind{pods}, About: []string{"web-1", "web-2"}, Describe: "Pod"}},
		{DescribeRequest{Args: []string{"node/n1", "node/n2"}},
			ReadScope{Part: true, Kinds: []*cluster.Kind{nodes, leaseKind, pods}, About: []string{"n1", "n2"}, Describe: "Node"}},
		{DescribeRequest{Args: []string{"pods"}}, ReadScope{}},
		{DescribeRequest{Args: []string{"pod", "x"}, Selector: "app=web"}, ReadScope{}},
		{DescribeRequest{Args: []string{"pod/a", "node/b"}}, ReadScope{}},
		{DescribeRequest{Args: []string{"deployment", "web"}}, ReadScope{}},
		{DescribeRequest{Args: []string{"nodepool", "default"}}, ReadScope{}},
	} {
		if got := DescribeScope(c.r); !reflect.DeepEqual(got, c.want) {
			t.Errorf("describe %+v: %+v, want %+v", c.r, got, c.want)
		}
	}
}

// TestPartialLoadsPrintTheSame: get and describe print the same whether
// the state is loaded whole or with only the events their scope names, and
// a partly loaded state refuses to be saved.
func TestPartialLoadsPrintTheSame(t *testing.T) {
	dir := t.TempDir()
	a, _ := open(t, dir)
	if err := a.Apply(ApplyRequest{Files: []string{writeManifest(t, "nodes.yaml", twoNodes), writeManifest(t, "web.yaml", webDeployment)}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Advance(time.Minute); err != nil {
		t.Fatal(err)
	}
	pods := cluster.SortedKeys(a.State().Pods)
	pod := pods[0][strings.Index(pods[0], "/")+1:]
	a.Close()
	run := func(scope ReadScope, f func(a *App) error) string {
		var out bytes.Buffer
		a, err := Open(Options{StateDir: dir, Out: &out, ErrOut: &out, ReadOnly: true, Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if err := f(a); err != nil {
			t.Fatal(err)
		}
		if scope.Part {
			if err := a.State().Save(t.TempDir()); err == nil {
				t.Errorf("a partly loaded state was saved")
			}
		}
		return out.String()
	}
	for _, args := range [][]string{{"nodes"}, {"pods"}, {"deploy,rs"}} {
		get := func(a *App) error { return a.Get(GetRequest{Args: args, Output: "wide"}) }
		if whole, part := run(ReadScope{}, get), run(GetScope(args), get); whole != part {
			t.Errorf("get %v loaded in part:\n%s\nwhole:\n%s", args, part, whole)
		}
	}
	for _, args := range [][]string{{"pod", pod}, {"node/n1"}, {"node", "n1", "n2"}} {
		r := DescribeRequest{Args: args}
		describe := func(a *App) error { return a.Describe(r) }
		whole, part := run(ReadScope{}, describe), run(DescribeScope(r), describe)
		if whole != part || (args[0] == "pod" && !strings.Contains(whole, "Scheduled")) {
			t.Errorf("describe %v loaded in part:\n%s\nwhole:\n%s", args, part, whole)
		}
	}
}
