package app

import (
	"github.com/berth-sim/berth/internal/cost"
)

// CostRequest is `berth cost`.
type CostRequest struct {
	By     string
	Output string
	cost.Options
}

// Cost prints what the cluster costs per hour now and, with a window,
// over virtual time (docs/cost.md).
func (a *App) Cost(r CostRequest) error {
	o := r.Options
	o.By = r.By
	rep, err := cost.Build(a.state, o)
	if err != nil {
		return err
	}
	return cost.Print(a.opts.Out, rep, r.Output)
}
