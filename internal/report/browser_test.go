package report_test

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/report"
)

// TestBrowser opens generated reports in a real browser: headless Chromium
// (the Debian package chromium) dumps the DOM it built, which must hold
// every node tile and the pending pod's reason, and takes a 1280x800
// screenshot kept as an artifact (docs/report.md#browser-test). The
// screenshots go to $BERTH_REPORT_ARTIFACTS when set, else to the test's
// artifact directory (go test -artifacts keeps it).
//
// Without chromium on PATH the test skips, except under CI=true, where it
// fails: CI must run it (.ci/run installs the package).
func TestBrowser(t *testing.T) {
	chromium := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		msg := "no chromium on PATH: install the Debian package chromium (apt-get install -y chromium) to run the browser test"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cases := []struct {
		name    string
		advance string
		steps   []string
		nodes   int
		pod     string
		reason  string
		maxSize int
	}{
		{"seed000", "2h", seed000, 4, "ui/ui-", "1 node(s) had untolerated taint {frontend: true}", 100 << 10},
		{"500-nodes", "", []string{"internal/report/testdata/big-cluster.yaml", "internal/report/testdata/big-workloads.yaml"},
			500, "default/arm-only-", "450 node(s) didn't match Pod's node affinity/selector", 1 << 20},
	}
	out := os.Getenv("BERTH_REPORT_ARTIFACTS")
	if out == "" {
		out = t.ArtifactDir()
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := build(t, c.advance, c.steps...)
			p, html := render(t, s, report.Options{})
			if len(html) > c.maxSize {
				t.Errorf("page is %d bytes, want at most %d", len(html), c.maxSize)
			}
			if want := c.nodes >= report.CompactFrom; p.Compact != want {
				t.Errorf("compact %v, want %v", p.Compact, want)
			}
			// Big nodes count their pods by workload in the tile's title.
			if p.Compact && !regexp.MustCompile(`title="[^"]* · deployment/web ×\d+`).MatchString(html) {
				t.Error("no tile counts its pods by workload")
			}
			dir := t.TempDir()
			file := filepath.Join(dir, c.name+".html")
			if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
				t.Fatal(err)
			}
			dom := runChromium(t, chromium, dir, "--dump-dom", "file://"+file)
			if n := len(regexp.MustCompile(`class="node[ "]`).FindAllStringIndex(dom, -1)); n != c.nodes {
				t.Errorf("DOM has %d node tiles, want %d", n, c.nodes)
			}
			if n := strings.Count(dom, `data-node="`); n != c.nodes {
				t.Errorf("DOM has %d data-node attributes, want %d", n, c.nodes)
			}
			if got := regexp.MustCompile(`id="node-count">(\d+)<`).FindStringSubmatch(dom); got == nil || got[1] != itoa(c.nodes) {
				t.Errorf("node count in the header: %v", got)
			}
			li := regexp.MustCompile(`(?s)<li data-pod="` + regexp.QuoteMeta(c.pod) + `[^"]*">.*?</li>`).FindString(dom)
			if li == "" {
				t.Fatalf("no pending pod %s* in the DOM", c.pod)
			}
			// The browser decoded the escaped text: the reason reads as why wrote it.
			if !strings.Contains(li, c.reason) {
				t.Errorf("pending pod's entry lacks %q:\n%s", c.reason, li)
			}
			shot := filepath.Join(out, c.name+".png")
			runChromium(t, chromium, dir, "--screenshot="+shot, "--window-size=1280,800", "file://"+file)
			f, err := os.Open(shot)
			if err != nil {
				t.Fatalf("no screenshot: %v", err)
			}
			defer f.Close()
			img, err := png.DecodeConfig(f)
			if err != nil || img.Width != 1280 || img.Height != 800 {
				t.Errorf("screenshot %s: %+v %v", shot, img, err)
			}
			t.Logf("screenshot: %s", shot)
		})
	}
}

// runChromium runs headless Chromium with a private profile in dir and
// returns its stdout. The timeout only stops a hung browser.
func runChromium(t *testing.T, chromium, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--no-first-run", "--disable-extensions"}
	cmd := exec.CommandContext(ctx, chromium, append(base, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", chromium, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
