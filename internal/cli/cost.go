package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/berth-sim/berth/internal/app"
)

// newCostCmd is `berth cost` (docs/cost.md).
func newCostCmd(g *globals) *cobra.Command {
	r := app.CostRequest{}
	var since string
	cmd := &cobra.Command{
		Use:   "cost [--by node|nodegroup|namespace|workload] [--since DURATION|0] [-o json|csv]",
		Short: "Show what the nodes cost per hour and, with --since, over virtual time; rolled up by node, group, namespace or workload",
		Example: `  berth cost
  berth cost --by namespace
  berth advance 24h && berth cost --since 0
  berth cost --by nodegroup --since 1h -o csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("since") {
				d, err := parseSince(since)
				if err != nil {
					return err
				}
				r.Since, r.Window = d, true
			}
			return withApp(g, cmd, true, func(a *app.App) error {
				return a.Cost(r)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&r.By, "by", "node", "roll-up: node, nodegroup (node groups, NodePools, Fargate profiles), namespace or workload")
	f.StringVar(&since, "since", "", "also show the cost over this much virtual time up to now (0: since the state began)")
	f.StringVarP(&r.Output, "output", "o", "", "json|csv (default: a table)")
	return cmd
}

// parseSince reads --since: a Go duration; 0 (or 0s) is the whole of
// virtual time.
func parseSince(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid --since %q: want a positive duration such as 1h or 30m, or 0 for since the state began", s)
	}
	return d, nil
}
