package cli

import (
	"bytes"
	"os"

	"github.com/spf13/cobra"

	"github.com/berth-sim/berth/internal/chainsaw"
)

// newTestCmd is `berth test` (docs/berth-test.md): Chainsaw Test files run
// offline, each test on its own throw-away cluster; --state is never read.
func newTestCmd(g *globals) *cobra.Command {
	var junit string
	cmd := &cobra.Command{
		Use:   "test FILE|DIR... [--junit FILE]",
		Short: "Run Kyverno Chainsaw Test files offline, each test on a fresh throw-away cluster in virtual time",
		Example: `  berth test examples/graviton/chainsaw-test.yaml
  berth test --junit report.xml examples/*/chainsaw-test.yaml
  berth test examples     # every chainsaw-test.yaml under the directory`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := chainsaw.Discover(args)
			if err != nil {
				return err
			}
			opts := chainsaw.Options{Seed: g.seed, KubernetesVersion: g.kubernetesVersion}
			var results []chainsaw.FileResult
			failed := false
			for _, f := range files {
				res := chainsaw.RunFile(f, opts)
				failed = failed || res.Failed()
				results = append(results, res)
			}
			chainsaw.Print(cmd.OutOrStdout(), results)
			if junit != "" {
				var buf bytes.Buffer
				if err := chainsaw.WriteJUnit(&buf, results); err != nil {
					return err
				}
				if err := os.WriteFile(junit, buf.Bytes(), 0o644); err != nil {
					return err
				}
			}
			if failed {
				return ExitError{Code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&junit, "junit", "", "also write the results as JUnit XML to this file")
	return cmd
}
