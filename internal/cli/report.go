package cli

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/berth-sim/berth/internal/app"
	"github.com/berth-sim/berth/internal/report"
)

// newReportCmd is `berth report --html FILE`: one self-contained HTML page
// with the nodes, the pending pods and their why, cost over virtual time and
// the events (docs/report.md).
func newReportCmd(g *globals) *cobra.Command {
	var file string
	o := report.Options{}
	cmd := &cobra.Command{
		Use:   "report --html FILE",
		Short: "Write one self-contained HTML page: nodes by zone and group, pending pods with their why, cost over virtual time, events",
		Example: `  berth report --html report.html
  berth report --html - --no-fixes > report.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return fmt.Errorf("must specify --html FILE (- for stdout)")
			}
			return withApp(g, cmd, true, func(a *app.App) error {
				page, err := report.Build(a.State(), o)
				if err != nil {
					return err
				}
				var b bytes.Buffer
				if err := report.Write(&b, page); err != nil {
					return err
				}
				if file == "-" {
					_, err := cmd.OutOrStdout().Write(b.Bytes())
					return err
				}
				if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "report written to %s: %d nodes in %d zones, %d pods running, %d pending (%d explained), %d events\n",
					file, page.Summary.Nodes, page.Summary.Zones, page.Summary.Running, page.Summary.Pending, len(page.Pending), len(page.Events)+page.EventsOmitted)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&file, "html", "", "write the page to this file (- for stdout)")
	f.BoolVar(&o.NoFixes, "no-fixes", false, "skip why's verified fixes (they re-run the simulation once per candidate)")
	f.IntVar(&o.MaxExplained, "max-explained", report.DefaultMaxExplained, "explain at most this many distinct pending workloads")
	f.IntVar(&o.MaxEvents, "max-events", report.DefaultMaxEvents, "show at most this many of the newest events")
	return cmd
}
