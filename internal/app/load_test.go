package app

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestEventScopes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want EventScope
	}{
		{[]string{"nodes"}, EventScope{None: true}},
		{[]string{"po,deploy"}, EventScope{None: true}},
		{[]string{"pod/a", "node/b"}, EventScope{None: true}},
		{[]string{"events"}, EventScope{}},
		{[]string{"pods,ev"}, EventScope{}},
		{[]string{"nodegroups"}, EventScope{}},
		{[]string{"all"}, EventScope{}},
		{[]string{"nonsense"}, EventScope{}},
	} {
		if got := GetEvents(c.args); !reflect.DeepEqual(got, c.want) {
			t.Errorf("get %v: %+v, want %+v", c.args, got, c.want)
		}
	}
	for _, c := range []struct {
		r    DescribeRequest
		want EventScope
	}{
		{DescribeRequest{Args: []string{"pod", "web-1", "web-2"}}, EventScope{About: []string{"web-1", "web-2"}}},
		{DescribeRequest{Args: []string{"node/n1", "node/n2"}}, EventScope{About: []string{"n1", "n2"}}},
		{DescribeRequest{Args: []string{"pods"}}, EventScope{}},
		{DescribeRequest{Args: []string{"pod", "x"}, Selector: "app=web"}, EventScope{}},
		{DescribeRequest{Args: []string{"pod/a", "node/b"}}, EventScope{}},
		{DescribeRequest{Args: []string{"deployment", "web"}}, EventScope{}},
		{DescribeRequest{Args: []string{"nodepool", "default"}}, EventScope{}},
	} {
		if got := DescribeEvents(c.r); !reflect.DeepEqual(got, c.want) {
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
	run := func(scope EventScope, f func(a *App) error) string {
		var out bytes.Buffer
		a, err := Open(Options{StateDir: dir, Out: &out, ErrOut: &out, ReadOnly: true, Events: scope})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if err := f(a); err != nil {
			t.Fatal(err)
		}
		if scope.None || len(scope.About) > 0 {
			if err := a.State().Save(t.TempDir()); err == nil {
				t.Errorf("a partly loaded state was saved")
			}
		}
		return out.String()
	}
	for _, args := range [][]string{{"nodes"}, {"pods"}, {"deploy,rs"}} {
		get := func(a *App) error { return a.Get(GetRequest{Args: args, Output: "wide"}) }
		if whole, part := run(EventScope{}, get), run(GetEvents(args), get); whole != part {
			t.Errorf("get %v loaded in part:\n%s\nwhole:\n%s", args, part, whole)
		}
	}
	for _, args := range [][]string{{"pod", pod}, {"node/n1"}, {"node", "n1", "n2"}} {
		r := DescribeRequest{Args: args}
		describe := func(a *App) error { return a.Describe(r) }
		whole, part := run(EventScope{}, describe), run(DescribeEvents(r), describe)
		if whole != part || (args[0] == "pod" && !strings.Contains(whole, "Scheduled")) {
			t.Errorf("describe %v loaded in part:\n%s\nwhole:\n%s", args, part, whole)
		}
	}
}
