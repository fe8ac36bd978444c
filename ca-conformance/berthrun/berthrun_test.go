package berthrun

import (
	"errors"
	"testing"

	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// The stub must say it is a stub, so a comparison that reaches it fails
// loudly instead of comparing against an empty result.
func TestStubSaysNotWired(t *testing.T) {
	res, err := Default.Run(&scenario.Scenario{})
	if !errors.Is(err, ErrNotWired) || res != nil {
		t.Fatalf("Run = %v, %v; want nil, ErrNotWired", res, err)
	}
}
