package describe

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/datadriven"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/berth-sim/berth/internal/app"
	"github.com/berth-sim/berth/internal/cli"
	"github.com/berth-sim/berth/internal/cluster"
)

// scenarios are the golden walk-throughs (internal/cli/testdata/scenarios)
// whose states are compared: the seed examples (Graviton node groups, node
// roles, StatefulSet zones, Fargate, Karpenter), workloads with a Service,
// PDB and Job, Karpenter's objects, config objects, node lifecycle and
// Services' endpoints.
var scenarios = []string{
	"seed000_graviton.txt",
	"seed002_roles.txt",
	"seed001_statefulset_zones.txt",
	"seed003_fargate.txt",
	"seed001_karpenter.txt",
	"workloads.txt",
	"karpenter_objects.txt",
	"describe_config.txt",
	"node_lifecycle.txt",
	"services.txt",
}

// knownDifference is a section berth adds to kubectl's describe output of a
// kind on purpose. An object that differs is still checked: with the
// section's lines taken out of berth's output (its header and the indented
// lines under it), the rest must match kubectl's up to the padding of the
// aligned columns (the added lines widen them).
type knownDifference struct {
	headers []string
	reason  string
}

var knownDifferences = map[string]knownDifference{
	"Node": {headers: []string{"Fargate:"},
		reason: "a Fargate node shows its size and hourly price (docs/fargate.md)"},
	"NodeClaim.karpenter.sh": {headers: []string{"Offering (berth):", "Placement (berth):"},
		reason: "berth shows the launched offering, its price and where the nominated pods were bound (docs/karpenter-interruption.md)"},
}

// withoutSections removes each section under one of headers.
func withoutSections(text string, headers []string) string {
	var out []string
	skipping := false
	for _, line := range strings.Split(text, "\n") {
		if skipping && strings.HasPrefix(line, "  ") {
			continue
		}
		skipping = slices.Contains(headers, line)
		if !skipping {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

var padding = regexp.MustCompile(`  +`)

// unpadded collapses alignment padding to two spaces.
func unpadded(text string) string { return padding.ReplaceAllString(text, "  ") }

// TestDescribeMatchesKubectl replays each scenario's commands into a fresh
// state and, after every block that changed the cluster, describes every
// object with kubectl's describers and with berth's: the outputs must be
// byte-identical (docs/services.md#the-describe-differential).
func TestDescribeMatchesKubectl(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	perKind, documented := map[string]int{}, map[string]int{}
	states := 0
	for _, name := range scenarios {
		t.Run(strings.TrimSuffix(name, ".txt"), func(t *testing.T) {
			stateDir := t.TempDir()
			var lastRV int64 = -1
			var lastNow time.Time
			var problems []string
			seenEvents := map[string]bool{}
			datadriven.RunTest(t, filepath.Join(repo, "internal/cli/testdata/scenarios", name), func(t *testing.T, d *datadriven.TestData) string {
				runBlock(t, repo, stateDir, d)
				s := loadState(t, stateDir)
				if s == nil || (s.ResourceVersion == lastRV && s.Now.Equal(lastNow)) {
					return d.Expected
				}
				lastRV, lastNow = s.ResourceVersion, s.Now
				states++
				problems = append(problems, compareState(t, d.Pos, s, perKind, documented, seenEvents)...)
				// The goldens are checked by internal/cli's TestScenarios;
				// here only the states they lead to matter.
				return d.Expected
			})
			// Reported after the walk so that one difference does not hide
			// the states after it.
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
	var kinds []string
	total := 0
	for k, n := range perKind {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
		total += n
	}
	sort.Strings(kinds)
	t.Logf("compared %d objects in %d states: %s", total, states, strings.Join(kinds, " "))
	for d, n := range documented {
		t.Logf("%d objects differ only by a documented section: %s", n, d)
	}
}

// compareState runs the comparison with the clock kubectl's describers read
// set to the state's virtual time.
func compareState(t *testing.T, pos string, s *cluster.State, perKind, documented map[string]int, seenEvents map[string]bool) []string {
	t.Helper()
	var problems []string
	synctest.Test(t, func(t *testing.T) {
		// The bubble's clock starts at 2000-01-01; berth's virtual time
		// starts in 2026 (cluster.Epoch), so sleeping moves it forward.
		time.Sleep(s.Now.Sub(time.Now()))
		results, err := Compare(s, func(kind string, o *unstructured.Unstructured) bool {
			if kind != "Event" {
				return false
			}
			key := string(o.GetUID()) + "@" + o.GetResourceVersion()
			if seenEvents[key] {
				return true
			}
			seenEvents[key] = true
			return false
		})
		if err != nil {
			t.Fatalf("%s: %v", pos, err)
		}
		tables, err := CompareTables(s)
		if err != nil {
			t.Fatalf("%s: %v", pos, err)
		}
		results = append(results, tables...)
		for _, r := range results {
			perKind[r.Kind]++
			if r.Same() {
				continue
			}
			if known, ok := knownDifferences[r.Kind]; ok && unpadded(withoutSections(r.Berth, known.headers)) == unpadded(r.Kubectl) {
				documented[r.Kind+": "+known.reason]++
				continue
			}
			problems = append(problems, fmt.Sprintf("%s: %s %s differs from kubectl:\n%s", pos, r.Kind, r.Key, lineDiff(r.Kubectl, r.Berth)))
		}
	})
	return problems
}

// runBlock runs one golden block's command lines as internal/cli's
// scenario test does (paths under examples/ and testdata/ resolved in the
// repository, "< FILE" fed on stdin).
func runBlock(t *testing.T, repo, stateDir string, d *datadriven.TestData) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		args, stdin, err := cli.ScenarioCommand(repo, stateDir, line)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		var out bytes.Buffer
		cli.Run(args, strings.NewReader(stdin), &out, &out)
	}
}

// loadState reads the state the commands left, or nil before the first
// write.
func loadState(t *testing.T, dir string) *cluster.State {
	t.Helper()
	a, err := app.Open(app.Options{StateDir: dir, ReadOnly: true, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s := a.State()
	if s.ResourceVersion == 0 {
		return nil
	}
	return s
}

// lineDiff shows the first differing lines of two outputs.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			continue
		}
		fmt.Fprintf(&b, "  line %d\n    kubectl: %q\n    berth:   %q\n", i+1, wl, gl)
		if shown++; shown == 8 {
			b.WriteString("  ...\n")
			break
		}
	}
	return b.String()
}
