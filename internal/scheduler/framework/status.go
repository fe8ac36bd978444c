// Package framework is berth's kube-scheduler framework: the plugin
// interfaces, the per-cycle state, node and pod bookkeeping. Plugins live in
// ../plugins/<name>/ and are known to the scheduler only through these interfaces.
package framework

import "strings"

// Code is a plugin status code, as in k8s.io/kube-scheduler/framework.
type Code int

const (
	Success Code = iota
	Error
	Unschedulable
	UnschedulableAndUnresolvable
	Wait
	Skip
	Pending
)

var codeNames = [...]string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending"}

func (c Code) String() string { return codeNames[c] }

// Status is the result of running a plugin. A nil *Status means Success.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus makes a status with the given code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps an error as an Error status.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code returns the code; nil means Success.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons returns the reason strings.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons with ", " as upstream does.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.reasons, ", ")
}

// Plugin names the plugin that produced the status.
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin records which plugin produced the status.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil {
		s.plugin = name
	}
	return s
}

// AppendReason adds a reason.
func (s *Status) AppendReason(r string) { s.reasons = append(s.reasons, r) }

// Err returns the wrapped error of an Error status.
func (s *Status) Err() error {
	if s == nil {
		return nil
	}
	return s.err
}

// IsSuccess is true for nil and Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip is true for Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsRejected is true for Unschedulable, UnschedulableAndUnresolvable and Pending.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable || c == Pending
}
