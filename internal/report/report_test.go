package report_test

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/app"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/report"
)

// build applies each step (files, or a Kustomize directory when the path
// has no .yaml suffix; paths from the repository root) to a fresh state,
// advances virtual time by advance, and returns the state.
func build(t testing.TB, advance string, steps ...string) *cluster.State {
	t.Helper()
	dir := t.TempDir()
	open := func(readOnly bool) *app.App {
		a, err := app.Open(app.Options{StateDir: dir, Seed: 1, ReadOnly: readOnly, Out: io.Discard, ErrOut: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, step := range steps {
		req := app.ApplyRequest{}
		path := filepath.Join("../..", step)
		if strings.HasSuffix(step, ".yaml") {
			req.Files = []string{path}
		} else {
			req.Kustomize = path
		}
		a := open(false)
		err := a.Apply(req)
		a.Close()
		if err != nil {
			t.Fatalf("apply %s: %v", step, err)
		}
	}
	if advance != "" {
		a := open(false)
		d, _ := timeParse(advance)
		err := a.Advance(d)
		a.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	a := open(true)
	t.Cleanup(func() { a.Close() })
	return a.State()
}

var seed000 = []string{"examples/graviton/cluster.yaml", "examples/graviton/base", "examples/graviton/nodeselector-wo-toleration"}

func render(t testing.TB, s *cluster.State, o report.Options) (*report.Page, string) {
	t.Helper()
	p, err := report.Build(s, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Write(&b, p); err != nil {
		t.Fatal(err)
	}
	return p, b.String()
}

// TestSeed000 checks the page against what why and cost say about seed
// 000: the stuck ui pod with the scheduler's reason and the verified
// toleration fix, the four nodes in three zones, and the cost rows.
func TestSeed000(t *testing.T) {
	s := build(t, "2h", seed000...)
	before, _ := json.Marshal(s)
	p, html := render(t, s, report.Options{})
	if after, _ := json.Marshal(s); !bytes.Equal(before, after) {
		t.Error("Build changed the state")
	}
	if p.Summary.Nodes != 4 || p.Summary.Zones != 3 || p.Summary.Pending != 1 || p.Compact {
		t.Errorf("summary %+v compact %v", p.Summary, p.Compact)
	}
	if len(p.Pending) != 1 {
		t.Fatalf("pending %+v", p.Pending)
	}
	pp := p.Pending[0]
	if !strings.Contains(pp.Reason, "1 node(s) had untolerated taint {frontend: true}") {
		t.Errorf("reason %q", pp.Reason)
	}
	if len(pp.Fixes) == 0 || !strings.HasPrefix(pp.Fixes[0], "add toleration frontend=true:NoExecute") {
		t.Errorf("fixes %q", pp.Fixes)
	}
	if !strings.Contains(pp.Full, "kube-scheduler: 0 of 4 nodes fit") {
		t.Errorf("full why %q", pp.Full)
	}
	if n := strings.Count(html, `data-node="`); n != 4 {
		t.Errorf("%d node tiles, want 4", n)
	}
	if p.Cost.PerHour != "$0.3216" || len(p.Cost.Rows) != 2 || p.Cost.Chart.Empty {
		t.Errorf("cost %+v", p.Cost)
	}
	for _, banned := range []string{"<script", "http://", "https://", "@import", "url("} {
		if strings.Contains(html, banned) {
			t.Errorf("page contains %q: it must be self-contained", banned)
		}
	}
	// Deterministic: the same state gives the same bytes.
	if _, again := render(t, s, report.Options{}); again != html {
		t.Error("two renders of one state differ")
	}
}

// TestEscapes feeds markup through an event message: html/template must
// show it as text.
func TestEscapes(t *testing.T) {
	s := build(t, "", "examples/graviton/cluster.yaml")
	s.Events = append(s.Events, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "x", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "evil"},
		Reason:         "Test", Type: corev1.EventTypeWarning, Count: 1,
		Message:       `<script>alert("x")</script>`,
		LastTimestamp: metav1.NewTime(s.Now),
	})
	_, html := render(t, s, report.Options{})
	if strings.Contains(html, "<script>") || !strings.Contains(html, "&lt;script&gt;") {
		t.Error("event message not escaped")
	}
}

func TestNoPendingNoTime(t *testing.T) {
	s := build(t, "", "examples/graviton/cluster.yaml")
	p, html := render(t, s, report.Options{})
	if len(p.Pending) != 0 || !strings.Contains(html, "No pending pods.") {
		t.Errorf("pending %+v", p.Pending)
	}
	// No virtual time has passed: the chart still shows today's rate.
	if p.Cost.Chart.Empty || len(p.Cost.Chart.Areas) != 2 {
		t.Errorf("chart %+v", p.Cost.Chart)
	}
}

func TestMaxEventsAndExplained(t *testing.T) {
	s := build(t, "", seed000...)
	p, _ := render(t, s, report.Options{MaxEvents: 5, NoFixes: true})
	if len(p.Events) != 5 || p.EventsOmitted != len(s.Events)-5 {
		t.Errorf("%d events, %d omitted of %d", len(p.Events), p.EventsOmitted, len(s.Events))
	}
	if len(p.Pending) != 1 || len(p.Pending[0].Fixes) != 0 {
		t.Errorf("NoFixes: %+v", p.Pending)
	}
}
