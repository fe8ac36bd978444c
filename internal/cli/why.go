package cli

import (
	"github.com/spf13/cobra"

	"github.com/berth-sim/berth/internal/app"
)

// newWhyCmd is `berth why`: every layer's reason a pod is where it is (or
// nowhere), and verified fixes (docs/why.md).
func newWhyCmd(g *globals) *cobra.Command {
	r := app.WhyRequest{}
	cmd := &cobra.Command{
		Use:   "why (POD | pod/NAME | deployment/NAME | statefulset/NAME)",
		Short: "Explain why a pod is Pending (or where it runs) across kube-scheduler, Karpenter, cluster-autoscaler and Fargate, with verified fixes",
		Example: `  berth why -n ui ui-d85489649-tp984
  berth why -n apps deployment/batch-worker
  berth why statefulset/express-nodejs -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(g, cmd, true, func(a *app.App) error {
				r.Arg, r.Namespace = args[0], g.namespace
				return a.Why(r)
			})
		},
	}
	cmd.Flags().StringVarP(&r.Output, "output", "o", "", "json|yaml (default: text)")
	cmd.Flags().BoolVar(&r.NoFixes, "no-fixes", false, "skip the suggested fixes (they re-run the simulation once per candidate)")
	return cmd
}
