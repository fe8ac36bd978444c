// Package chainsaw reads Kyverno Chainsaw Test files and runs them offline
// against a throw-away berth cluster in virtual time: `berth test`. The
// subset of Chainsaw that berth supports, and berth's own extension, are
// written down in docs/berth-test.md.
package chainsaw

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"sigs.k8s.io/yaml"
)

// APIVersion is the only Test API berth reads.
const APIVersion = "chainsaw.kyverno.io/v1alpha1"

// Chainsaw's default timeouts per operation type (its `chainsaw test`
// flags); in berth they are virtual time (docs/berth-test.md#timeouts).
const (
	DefaultAssertTimeout = 30 * time.Second
	DefaultErrorTimeout  = 30 * time.Second
)

// Test is one Chainsaw Test document.
type Test struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       TestSpec `json:"spec"`
	// File is where the test was read from; relative paths in operations
	// resolve against its directory, as Chainsaw resolves them against
	// the test's folder.
	File string `json:"-"`
}

// Metadata is the part of a Test's metadata berth uses.
type Metadata struct {
	Name string `json:"name"`
}

// TestSpec is a Test's spec.
type TestSpec struct {
	Description string    `json:"description,omitempty"`
	Namespace   string    `json:"namespace,omitempty"`
	Timeouts    *Timeouts `json:"timeouts,omitempty"`
	Skip        *bool     `json:"skip,omitempty"`
	Steps       []Step    `json:"steps"`
}

// Timeouts are Chainsaw's per-operation-type timeouts; berth uses assert
// and error (the others bound wall-clock work berth does not have).
type Timeouts struct {
	Apply   *Duration `json:"apply,omitempty"`
	Assert  *Duration `json:"assert,omitempty"`
	Cleanup *Duration `json:"cleanup,omitempty"`
	Delete  *Duration `json:"delete,omitempty"`
	Error   *Duration `json:"error,omitempty"`
	Exec    *Duration `json:"exec,omitempty"`
}

// Step is one step: its try operations run in order; catch and finally
// are diagnostics and cleanup on a real cluster, skipped by berth.
type Step struct {
	Name        string      `json:"name,omitempty"`
	Description string      `json:"description,omitempty"`
	Timeouts    *Timeouts   `json:"timeouts,omitempty"`
	Try         []Operation `json:"try"`
	Catch       []any       `json:"catch,omitempty"`
	Finally     []any       `json:"finally,omitempty"`
	Cleanup     []any       `json:"cleanup,omitempty"`
}

// Operation is one entry of a step's try list; exactly one field is set.
type Operation struct {
	Description string `json:"description,omitempty"`

	Apply  *ResourceOp `json:"apply,omitempty"`
	Create *ResourceOp `json:"create,omitempty"`
	Assert *ResourceOp `json:"assert,omitempty"`
	Error  *ResourceOp `json:"error,omitempty"`
	Delete *DeleteOp   `json:"delete,omitempty"`
	Sleep  *SleepOp    `json:"sleep,omitempty"`
	// Berth is berth's extension (docs/berth-test.md#berth-extension).
	Berth *BerthOp `json:"berth,omitempty"`

	// Operations that need a real cluster or a shell.
	Script   any `json:"script,omitempty"`
	Command  any `json:"command,omitempty"`
	Patch    any `json:"patch,omitempty"`
	Update   any `json:"update,omitempty"`
	Wait     any `json:"wait,omitempty"`
	Get      any `json:"get,omitempty"`
	Events   any `json:"events,omitempty"`
	PodLogs  any `json:"podLogs,omitempty"`
	Describe any `json:"describe,omitempty"`
}

// ResourceOp is apply, create, assert and error: a file or an inline
// resource.
type ResourceOp struct {
	File     string         `json:"file,omitempty"`
	Resource map[string]any `json:"resource,omitempty"`
	Timeout  *Duration      `json:"timeout,omitempty"`
}

// DeleteOp deletes by reference or by the objects of a file.
type DeleteOp struct {
	Ref      *ObjectRef     `json:"ref,omitempty"`
	File     string         `json:"file,omitempty"`
	Resource map[string]any `json:"resource,omitempty"`
	Timeout  *Duration      `json:"timeout,omitempty"`
}

// ObjectRef names objects to delete: by name, or by labels.
type ObjectRef struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Namespace  string            `json:"namespace,omitempty"`
	Name       string            `json:"name,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
}

// SleepOp waits: in berth, virtual time advances by Duration.
type SleepOp struct {
	Duration Duration `json:"duration"`
}

// Duration is a Go duration string in YAML ("30s", "2m").
type Duration struct{ time.Duration }

// UnmarshalJSON reads "30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := yaml.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", s)
	}
	d.Duration = v
	return nil
}

// ParseFile reads every Test document of a file.
func ParseFile(path string) ([]*Test, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tests, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, t := range tests {
		t.File = path
	}
	return tests, nil
}

// Parse decodes the Test documents of a YAML stream. Unknown fields are
// refused, so that a misspelt operation never passes silently.
func Parse(data []byte) ([]*Test, error) {
	var tests []*Test
	for i, doc := range splitDocuments(data) {
		var probe struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if probe.APIVersion == "" && probe.Kind == "" {
			continue // an empty document
		}
		if probe.APIVersion != APIVersion || probe.Kind != "Test" {
			return nil, fmt.Errorf("document %d: %s %s is not a Chainsaw test (want apiVersion: %s, kind: Test)", i+1, probe.APIVersion, probe.Kind, APIVersion)
		}
		t := &Test{}
		if err := yaml.UnmarshalStrict(doc, t); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if t.Metadata.Name == "" {
			return nil, fmt.Errorf("document %d: metadata.name is required", i+1)
		}
		for si, s := range t.Spec.Steps {
			for oi, op := range s.Try {
				if n := op.count(); n != 1 {
					return nil, fmt.Errorf("test %s: step %d: try[%d]: want exactly one operation, found %d", t.Metadata.Name, si+1, oi, n)
				}
			}
		}
		tests = append(tests, t)
	}
	if len(tests) == 0 {
		return nil, errors.New("no Chainsaw Test found")
	}
	return tests, nil
}

// splitDocuments cuts a YAML stream at its "---" separator lines.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		trimmed := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(trimmed, []byte("---")) || bytes.HasPrefix(trimmed, []byte("--- ")) {
			docs = append(docs, cur)
			cur = nil
			continue
		}
		cur = append(cur, line...)
	}
	return append(docs, cur)
}

func (o Operation) count() int {
	n := 0
	for _, set := range []bool{o.Apply != nil, o.Create != nil, o.Assert != nil, o.Error != nil, o.Delete != nil,
		o.Sleep != nil, o.Berth != nil, o.Script != nil, o.Command != nil, o.Patch != nil, o.Update != nil,
		o.Wait != nil, o.Get != nil, o.Events != nil, o.PodLogs != nil, o.Describe != nil} {
		if set {
			n++
		}
	}
	return n
}
