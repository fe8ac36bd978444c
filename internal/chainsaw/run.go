package chainsaw

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/internal/app"
	"github.com/berth-sim/berth/internal/cluster"
)

// PollInterval is how far virtual time moves between two checks of an
// assert, error or berth operation that does not hold yet.
const PollInterval = time.Second

// Options configure a run.
type Options struct {
	// Seed and KubernetesVersion create each test's throw-away cluster,
	// as `berth --seed` does for a new state.
	Seed              int64
	KubernetesVersion string
}

// FileResult is the outcome of one test file.
type FileResult struct {
	File  string
	Err   string // the file could not be read or parsed
	Tests []TestResult
}

// TestResult is one Test's outcome.
type TestResult struct {
	Name  string
	Err   string // the throw-away cluster could not be set up
	Steps []StepResult
}

// StepResult is one step's outcome.
type StepResult struct {
	Name string
	// Skipped steps come after a failed one: Chainsaw stops a test at its
	// first failure.
	Skipped bool
	Failure string
	// Virtual is the virtual time when the step ended.
	Virtual time.Duration
}

// Failed reports whether anything in the file failed.
func (f FileResult) Failed() bool {
	if f.Err != "" {
		return true
	}
	for _, t := range f.Tests {
		if t.Failed() {
			return true
		}
	}
	return false
}

// Failed reports whether the test failed.
func (t TestResult) Failed() bool {
	if t.Err != "" {
		return true
	}
	for _, s := range t.Steps {
		if s.Failure != "" {
			return true
		}
	}
	return false
}

// RunFile parses and runs every test of a file.
func RunFile(path string, o Options) FileResult {
	res := FileResult{File: path}
	tests, err := ParseFile(path)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	for _, t := range tests {
		res.Tests = append(res.Tests, Run(t, o))
	}
	return res
}

// Run runs one test on a fresh cluster in a temporary state directory that
// is removed afterwards; the user's own state is never opened.
func Run(t *Test, o Options) TestResult {
	res := TestResult{Name: t.Metadata.Name}
	dir, err := os.MkdirTemp("", "berth-test-")
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer os.RemoveAll(dir)
	r := &runner{test: t, stateDir: filepath.Join(dir, "state"), scratch: dir, opts: o, testDir: filepath.Dir(t.File)}
	failed := false
	for i, s := range t.Spec.Steps {
		name := s.Name
		if name == "" {
			name = fmt.Sprintf("step-%02d", i+1)
		}
		sr := StepResult{Name: name, Skipped: failed}
		if !failed {
			if err := r.step(s); err != nil {
				// Inline resources are applied from the scratch directory;
				// its random name stays out of the report.
				sr.Failure = strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
				failed = true
			}
			sr.Virtual = r.now()
		}
		res.Steps = append(res.Steps, sr)
	}
	return res
}

// runner holds one test's throw-away cluster.
type runner struct {
	test     *Test
	testDir  string
	stateDir string
	scratch  string
	opts     Options
	inline   int
	// virtual is the cluster's virtual time after the last operation.
	virtual time.Duration
}

func (r *runner) now() time.Duration { return r.virtual }

// namespace is where namespaced objects without one live: the test's
// spec.namespace, else "default" (docs/berth-test.md#namespaces).
func (r *runner) namespace() string {
	if r.test.Spec.Namespace != "" {
		return r.test.Spec.Namespace
	}
	return "default"
}

// open opens the throw-away state as one berth command would; output goes
// to out (kept for failure messages).
func (r *runner) open(out *bytes.Buffer) (*app.App, error) {
	return app.Open(app.Options{StateDir: r.stateDir, KubernetesVersion: r.opts.KubernetesVersion, Seed: r.opts.Seed, Out: out, ErrOut: out})
}

// with runs f on the opened state and records the virtual time after it.
func (r *runner) with(f func(a *app.App, out *bytes.Buffer) error) error {
	var out bytes.Buffer
	a, err := r.open(&out)
	if err != nil {
		return err
	}
	defer a.Close()
	err = f(a, &out)
	r.virtual = a.State().Now.Sub(cluster.Epoch)
	return err
}

func (r *runner) step(s Step) error {
	for i, op := range s.Try {
		if err := r.operation(s, op); err != nil {
			sep := " "
			if strings.HasPrefix(err.Error(), "\n") {
				sep = ""
			}
			return fmt.Errorf("try[%d] %s:%s%w", i, op.name(), sep, err)
		}
	}
	return nil
}

func (o Operation) name() string {
	switch {
	case o.Apply != nil:
		return "apply"
	case o.Create != nil:
		return "create"
	case o.Assert != nil:
		return "assert"
	case o.Error != nil:
		return "error"
	case o.Delete != nil:
		return "delete"
	case o.Sleep != nil:
		return "sleep"
	case o.Berth != nil:
		return "berth"
	case o.Script != nil:
		return "script"
	case o.Command != nil:
		return "command"
	case o.Patch != nil:
		return "patch"
	case o.Update != nil:
		return "update"
	case o.Wait != nil:
		return "wait"
	case o.Get != nil:
		return "get"
	case o.Events != nil:
		return "events"
	case o.PodLogs != nil:
		return "podLogs"
	}
	return "describe"
}

func (r *runner) operation(s Step, op Operation) error {
	switch {
	case op.Apply != nil:
		return r.apply(op.Apply)
	case op.Create != nil:
		return r.apply(op.Create)
	case op.Assert != nil:
		return r.assert(op.Assert, r.timeout(s, op.Assert.Timeout, false), false)
	case op.Error != nil:
		return r.assert(op.Error, r.timeout(s, op.Error.Timeout, true), true)
	case op.Delete != nil:
		return r.delete(op.Delete)
	case op.Sleep != nil:
		return r.with(func(a *app.App, _ *bytes.Buffer) error { return a.Advance(op.Sleep.Duration.Duration) })
	case op.Berth != nil:
		return r.berth(op.Berth, r.timeout(s, op.Berth.Timeout, false))
	case op.Script != nil, op.Command != nil:
		return fmt.Errorf("not supported offline: berth test runs no shell commands; use apply/assert or the berth extension (docs/berth-test.md#not-supported)")
	}
	return fmt.Errorf("not supported offline: berth test has no %s operation (docs/berth-test.md#not-supported)", op.name())
}

// timeout is the operation's own timeout, else the step's, else the
// test's, else Chainsaw's default, as Chainsaw looks it up.
func (r *runner) timeout(s Step, own *Duration, isError bool) time.Duration {
	pick := func(t *Timeouts) *Duration {
		if t == nil {
			return nil
		}
		if isError {
			return t.Error
		}
		return t.Assert
	}
	for _, d := range []*Duration{own, pick(s.Timeouts), pick(r.test.Spec.Timeouts)} {
		if d != nil {
			return d.Duration
		}
	}
	if isError {
		return DefaultErrorTimeout
	}
	return DefaultAssertTimeout
}

// inlineFile writes an inline resource to the test's scratch directory, so
// apply and delete read it as `berth apply -f` / `delete -f` would.
func (r *runner) inlineFile(res any) (string, error) {
	data, err := yaml.Marshal(res)
	if err != nil {
		return "", err
	}
	r.inline++
	f := filepath.Join(r.scratch, fmt.Sprintf("inline-%d.yaml", r.inline))
	return f, os.WriteFile(f, data, 0o644)
}

// apply applies a file, a Kustomize directory (berth extension) or an
// inline resource, as `berth apply` would.
func (r *runner) apply(op *ResourceOp) error {
	req := app.ApplyRequest{Namespace: r.test.Spec.Namespace}
	switch {
	case op.Resource != nil && op.File != "":
		return fmt.Errorf("set file or resource, not both")
	case op.Resource != nil:
		f, err := r.inlineFile(op.Resource)
		if err != nil {
			return err
		}
		req.Files = []string{f}
	case op.File != "":
		p := resolve(r.testDir, op.File)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			req.Kustomize = p
		} else {
			files, err := expand(p)
			if err != nil {
				return err
			}
			req.Files = files
		}
	default:
		return fmt.Errorf("file or resource is required")
	}
	return r.with(func(a *app.App, _ *bytes.Buffer) error { return a.Apply(req) })
}

// assert checks every expected object, advancing virtual time until all
// hold or the timeout has passed (docs/berth-test.md#timeouts). With
// isError it checks that no actual object matches instead.
func (r *runner) assert(op *ResourceOp, timeout time.Duration, isError bool) error {
	expected, err := loadExpected(r.testDir, op)
	if err != nil {
		return err
	}
	return r.poll(timeout, func(s *cluster.State) (string, error) {
		for _, exp := range expected {
			var msg string
			var err error
			if isError {
				msg, err = checkAbsent(s, exp, r.namespace())
			} else {
				msg, err = checkPresent(s, exp, r.namespace())
			}
			if err != nil || msg != "" {
				return msg, err
			}
		}
		return "", nil
	})
}

// poll runs check now and after every PollInterval of virtual time until
// it passes or timeout has elapsed; the last failure is the error. An
// error from check (a malformed expectation) fails at once.
func (r *runner) poll(timeout time.Duration, check func(s *cluster.State) (string, error)) error {
	return r.with(func(a *app.App, out *bytes.Buffer) error {
		start := a.State().Now
		for {
			msg, err := check(a.State())
			if err != nil {
				return err
			}
			if msg == "" {
				return nil
			}
			waited := a.State().Now.Sub(start)
			if waited >= timeout {
				return fmt.Errorf("%s\n(still failing after %s of virtual time)", msg, timeout)
			}
			step := PollInterval
			if timeout-waited < step {
				step = timeout - waited
			}
			out.Reset()
			if err := a.Advance(step); err != nil {
				return err
			}
		}
	})
}

// checkPresent passes when some actual object matches exp; otherwise it
// describes the closest failures.
func checkPresent(s *cluster.State, exp map[string]any, ns string) (string, error) {
	cands, err := candidates(s, exp, ns)
	if err != nil {
		return "", err
	}
	if len(cands) == 0 {
		// Chainsaw's two texts: a named object missing, an empty list.
		if meta, _ := exp["metadata"].(map[string]any); meta["name"] != nil {
			return fmt.Sprintf("%s: actual resource not found", describeExpected(exp, ns)), nil
		}
		return fmt.Sprintf("%s: no actual resource found", describeExpected(exp, ns)), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: no actual resource matches", describeExpected(exp, ns))
	for _, c := range cands {
		diffs, err := Match(exp, c.content)
		if err != nil {
			return "", err
		}
		if len(diffs) == 0 {
			return "", nil
		}
		fmt.Fprintf(&b, "\n  %s:", c.ref)
		for _, d := range diffs {
			fmt.Fprintf(&b, "\n    %s", d)
		}
	}
	return b.String(), nil
}

// checkAbsent passes when no actual object matches exp.
func checkAbsent(s *cluster.State, exp map[string]any, ns string) (string, error) {
	cands, err := candidates(s, exp, ns)
	if err != nil {
		return "", err
	}
	for _, c := range cands {
		diffs, err := Match(exp, c.content)
		if err != nil {
			return "", err
		}
		if len(diffs) == 0 {
			return fmt.Sprintf("%s: unexpected resource found: %s matches", describeExpected(exp, ns), c.ref), nil
		}
	}
	return "", nil
}

func describeExpected(exp map[string]any, ns string) string {
	apiVersion, _ := exp["apiVersion"].(string)
	kind, _ := exp["kind"].(string)
	meta, _ := exp["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if n, _ := meta["namespace"].(string); n != "" {
		ns = n
	}
	if name == "" {
		name = "(any)"
	}
	if k, err := kindOf(apiVersion, kind); err == nil && !k.Namespaced {
		return fmt.Sprintf("%s %s %s", apiVersion, kind, name)
	}
	return fmt.Sprintf("%s %s %s/%s", apiVersion, kind, ns, name)
}

// delete removes the referenced objects, or those of a file, with
// `berth delete`'s background cascading.
func (r *runner) delete(op *DeleteOp) error {
	req := app.DeleteRequest{Namespace: r.test.Spec.Namespace}
	switch {
	case op.Ref != nil:
		k, err := kindOf(op.Ref.APIVersion, op.Ref.Kind)
		if err != nil {
			return err
		}
		res := k.GroupResource()
		if op.Ref.Namespace != "" {
			req.Namespace = op.Ref.Namespace
		}
		switch {
		case op.Ref.Name != "":
			req.Args = []string{res + "/" + op.Ref.Name}
		case len(op.Ref.Labels) > 0:
			req.Args = []string{res}
			var sel []string
			for _, key := range cluster.SortedKeys(op.Ref.Labels) {
				sel = append(sel, key+"="+op.Ref.Labels[key])
			}
			req.Selector = strings.Join(sel, ",")
		default:
			return fmt.Errorf("ref needs a name or labels")
		}
	case op.File != "" || op.Resource != nil:
		if op.Resource != nil {
			f, err := r.inlineFile(op.Resource)
			if err != nil {
				return err
			}
			req.Files = []string{f}
		} else {
			files, err := expand(resolve(r.testDir, op.File))
			if err != nil {
				return err
			}
			req.Files = files
		}
	default:
		return fmt.Errorf("ref, file or resource is required")
	}
	return r.with(func(a *app.App, _ *bytes.Buffer) error { return a.Delete(req) })
}

// expand resolves a glob pattern ("resources/*.yaml", as Chainsaw accepts)
// to its files in name order; a plain path is itself.
func expand(p string) ([]string, error) {
	if !strings.ContainsAny(p, "*?[") {
		return []string{p}, nil
	}
	files, err := filepath.Glob(p)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no file matches", p)
	}
	return files, nil // Glob sorts
}
