package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/berth-sim/berth/internal/app"
)

// nodeOpCommands are the node operations kubectl has (cordon, uncordon,
// drain, taint, label) plus berth's `node fail`.
func nodeOpCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{
		newCordonCmd(g, true), newCordonCmd(g, false), newDrainCmd(g),
		newNodeEditCmd(g, "taint"), newNodeEditCmd(g, "label"), newNodeCmd(g),
	}
}

// rawExit prints an app.RawError as kubectl prints an aggregate (no
// "error: " prefix) and exits 1; other errors pass through.
func rawExit(cmd *cobra.Command, err error) error {
	var raw *app.RawError
	if errors.As(err, &raw) {
		for _, l := range raw.Lines {
			fmt.Fprintln(cmd.ErrOrStderr(), l)
		}
		return ExitError{Code: 1}
	}
	return err
}

func newCordonCmd(g *globals, desired bool) *cobra.Command {
	use, short := "cordon NODE...", "Mark nodes unschedulable"
	if !desired {
		use, short = "uncordon NODE...", "Mark nodes schedulable again"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(g, cmd, false, func(a *app.App) error {
				return a.Cordon(args, desired)
			})
		},
	}
}

func newDrainCmd(g *globals) *cobra.Command {
	r := app.DrainRequest{}
	cmd := &cobra.Command{
		Use:   "drain NODE...",
		Short: "Cordon nodes and evict their pods, honouring PodDisruptionBudgets, in virtual time",
		Example: `  berth drain ip-10-42-1-2.us-west-2.compute.internal --ignore-daemonsets
  berth drain NODE --ignore-daemonsets --delete-emptydir-data --force --timeout 2m`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(g, cmd, false, func(a *app.App) error {
				r.Nodes = args
				return rawExit(cmd, a.Drain(r))
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&r.IgnoreDaemonSets, "ignore-daemonsets", false, "ignore DaemonSet-managed pods")
	f.BoolVar(&r.DeleteEmptyDirData, "delete-emptydir-data", false, "continue even if there are pods using emptyDir")
	f.BoolVar(&r.Force, "force", false, "continue even if there are pods that do not declare a controller")
	f.DurationVar(&r.Timeout, "timeout", 0, "give up after this much virtual time (0 = until no progress is possible)")
	return cmd
}

func newNodeEditCmd(g *globals, verb string) *cobra.Command {
	r := app.NodeEditRequest{}
	use, short, example := "taint nodes NODE... KEY[=VALUE]:EFFECT | KEY[:EFFECT]-", "Update the taints of nodes",
		"  berth taint nodes NODE dedicated=db:NoSchedule\n  berth taint nodes NODE dedicated:NoSchedule-"
	if verb == "label" {
		use, short, example = "label nodes NODE... KEY=VALUE | KEY-", "Update the labels of nodes",
			"  berth label nodes NODE disktype=ssd\n  berth label nodes NODE disktype-"
	}
	cmd := &cobra.Command{
		Use: use, Short: short, Example: example,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(g, cmd, false, func(a *app.App) error {
				r.Args = args
				if verb == "label" {
					return a.Label(r)
				}
				return a.Taint(r)
			})
		},
	}
	cmd.Flags().BoolVar(&r.Overwrite, "overwrite", false, "allow replacing existing values")
	return cmd
}

func newNodeCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "node", Short: "Node events berth simulates (fail)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "fail NODE",
		Short: "Make a node stop reporting (NotReady, unreachable taints; pods are evicted after tolerationSeconds)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(g, cmd, false, func(a *app.App) error {
				return a.FailNode(args[0])
			})
		},
	})
	return cmd
}
