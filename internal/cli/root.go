// Package cli defines berth's commands. It holds wiring only: flags are parsed
// here and handed to internal/app, which does the work.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/berth-sim/berth/internal/app"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/view"
)

// ExitError carries a process exit status with an already-printed message.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// globals are the flags every command shares.
type globals struct {
	stateDir          string
	kubernetesVersion string
	seed              int64
	namespace         string
	lockTimeout       time.Duration
}

func (g *globals) options(in io.Reader, out, errOut io.Writer) app.Options {
	dir := g.stateDir
	if dir == "" {
		dir = os.Getenv("BERTH_STATE")
	}
	if dir == "" {
		dir = ".berth"
	}
	return app.Options{
		StateDir:          dir,
		KubernetesVersion: g.kubernetesVersion,
		Seed:              g.seed,
		LockTimeout:       g.lockTimeout,
		In:                in,
		Out:               out,
		ErrOut:            errOut,
		Progress:          stderrProgress(errOut),
	}
}

// NewRoot builds the berth command tree writing to out and errOut.
func NewRoot(in io.Reader, out, errOut io.Writer) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "berth",
		Short: "Offline, deterministic simulator of Kubernetes pod placement on AWS EKS",
		Long: `berth plays an EKS cluster forward in virtual time from the manifests you already have
(Kubernetes YAML, Kustomize, eksctl ClusterConfig) with kube-scheduler's and the controllers'
semantics, and shows the result the way kubectl would.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	pf := root.PersistentFlags()
	pf.StringVar(&g.stateDir, "state", "", "state directory (default $BERTH_STATE or ./.berth)")
	pf.StringVar(&g.kubernetesVersion, "kubernetes-version", "", "Kubernetes version of a newly created state (default "+app.DefaultKubernetesVersion()+"; a ClusterConfig's metadata.version wins)")
	pf.Int64Var(&g.seed, "seed", 1, "seed of a newly created state: generated names, IPs and tie-breaks derive from it")
	pf.StringVarP(&g.namespace, "namespace", "n", "", "namespace (default \"default\")")
	pf.DurationVar(&g.lockTimeout, "lock-timeout", cluster.DefaultLockTimeout, "how long to wait while another berth command uses the state (0: fail at once)")

	root.AddCommand(
		newApplyCmd(g),
		newGetCmd(g),
		newDescribeCmd(g),
		newRolloutCmd(g),
		newDeleteCmd(g),
		newEventsCmd(g),
		newAdvanceCmd(g),
		newResetCmd(g),
		newDemoCmd(g),
		newTestCmd(g),
		newVersionCmd(),
	)
	root.AddCommand(nodeOpCommands(g)...)
	root.AddCommand(newKarpenterCmd(g))
	root.AddCommand(newCostCmd(g))
	root.AddCommand(newWhyCmd(g))
	root.AddCommand(newReportCmd(g))
	root.AddCommand(newExportCmd(g))
	return root
}

// Execute runs berth with os.Args and returns the process exit status.
func Execute() int {
	return Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run runs one berth command line; used by main and by the scenario tests.
func Run(args []string, in io.Reader, out, errOut io.Writer) int {
	root := NewRoot(in, out, errOut)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var exit ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	var noResources *view.NoResourcesFound
	var noEvents *view.NoEventsFound
	if errors.As(err, &noResources) || errors.As(err, &noEvents) {
		// kubectl reports an empty result on stderr and succeeds.
		fmt.Fprintln(errOut, err)
		return 0
	}
	fmt.Fprintln(errOut, kubectlError(err))
	return 1
}

// kubectlError renders an error the way kubectl prints it: API errors as
// they are, everything else behind "error: ".
func kubectlError(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "error: ") || strings.HasPrefix(msg, "Error from server") {
		return msg
	}
	return "error: " + msg
}
