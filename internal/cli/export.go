package cli

import (
	"github.com/spf13/cobra"

	"github.com/berth-sim/berth/internal/app"
)

func newExportCmd(g *globals) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "export [-o DIRECTORY]",
		Short: "Write the whole cluster state as YAML manifests (to stdout, or one file per kind)",
		Long: "Write every object of the cluster state as multi-document YAML, as kubectl get -o yaml prints it,\n" +
			"sorted by kind and then by namespace/name, for people to read and for diffs (docs/state.md#export).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(g, cmd, true, func(a *app.App) error { return a.Export(dir) })
		},
	}
	cmd.Flags().StringVarP(&dir, "output-dir", "o", "", "write one file per kind into this directory instead of stdout")
	return cmd
}
