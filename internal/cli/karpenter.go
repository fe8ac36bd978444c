package cli

import (
	"github.com/spf13/cobra"

	"github.com/berth-sim/berth/internal/app"
)

// newKarpenterCmd groups what a user does to Karpenter's AWS world: spot
// interruptions, EC2 capacity and spot prices
// (docs/karpenter-interruption.md).
func newKarpenterCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "karpenter", Short: "EC2 events Karpenter reacts to: spot interruptions, insufficient capacity, spot prices"}
	cmd.AddCommand(newInterruptCmd(g), newUnavailableCmd(g), newSpotPricesCmd(g))
	return cmd
}

func newInterruptCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "interrupt (NODE | node/NAME | nodeclaim/NAME)",
		Short: "Send EC2's spot interruption warning now; Karpenter drains and replaces the node, EC2 reclaims it 2 minutes later",
		Example: `  berth karpenter interrupt ip-10-0-110-154.eu-west-1.compute.internal
  berth karpenter interrupt nodeclaim/default-268kn`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(g, cmd, false, func(a *app.App) error {
				return a.KarpenterInterrupt(args[0])
			})
		},
	}
}

func newUnavailableCmd(g *globals) *cobra.Command {
	r := app.UnavailableRequest{}
	cmd := &cobra.Command{
		Use:   "unavailable [TYPE ZONE CAPACITY-TYPE]",
		Short: "Make EC2 answer InsufficientInstanceCapacity for an offering (until cleared, or --for a while); no arguments: list",
		Example: `  berth karpenter unavailable c6g.2xlarge eu-west-1b spot
  berth karpenter unavailable m5.large us-west-2a on-demand --for 10m
  berth karpenter unavailable c6g.2xlarge eu-west-1b spot --clear
  berth karpenter unavailable`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(g, cmd, len(args) == 0, func(a *app.App) error {
				r.Args = args
				return a.KarpenterUnavailable(r)
			})
		},
	}
	cmd.Flags().DurationVar(&r.For, "for", 0, "how long EC2 has no capacity, in virtual time (0 = until cleared)")
	cmd.Flags().BoolVar(&r.Clear, "clear", false, "EC2 has capacity for the offering again")
	return cmd
}

func newSpotPricesCmd(g *globals) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "spot-prices [-f FILE.json]",
		Short: "Load spot prices from `aws ec2 describe-spot-price-history` JSON; without -f, list them",
		Example: `  aws ec2 describe-spot-price-history --region us-west-2 --product-descriptions Linux/UNIX > spot.json
  berth karpenter spot-prices -f spot.json
  berth karpenter spot-prices`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(g, cmd, file == "", func(a *app.App) error {
				return a.KarpenterSpotPrices(file)
			})
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "describe-spot-price-history JSON file")
	return cmd
}
