package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/berth-sim/berth/internal/app"
)

// withApp opens the state (locked: shared when readOnly, else exclusive),
// runs fn and releases the lock however fn ends.
func withApp(g *globals, cmd *cobra.Command, readOnly bool, fn func(a *app.App) error) error {
	opts := g.options(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
	opts.ReadOnly = readOnly
	a, err := app.Open(opts)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a)
}

func newApplyCmd(g *globals) *cobra.Command {
	var files []string
	var kustomize string
	cmd := &cobra.Command{
		Use:   "apply (-f FILENAME | -k DIRECTORY)",
		Short: "Apply manifests to the simulated cluster, then run it until it settles",
		Example: `  berth apply -f examples/graviton/cluster.yaml
  berth apply -k examples/graviton/base
  cat pod.yaml | berth apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 && kustomize == "" {
				return fmt.Errorf("must specify one of -f and -k")
			}
			if len(files) > 0 && kustomize != "" {
				return fmt.Errorf("only one of -f or -k can be specified")
			}
			return withApp(g, cmd, false, func(a *app.App) error {
				return a.Apply(app.ApplyRequest{Files: files, Kustomize: kustomize, Namespace: g.namespace})
			})
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "file, directory or - (stdin); repeatable")
	cmd.Flags().StringVarP(&kustomize, "kustomize", "k", "", "Kustomize directory")
	return cmd
}

func newGetCmd(g *globals) *cobra.Command {
	o := app.GetRequest{}
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] | TYPE/NAME",
		Short: "List objects as kubectl get does",
		Example: `  berth get nodes -o wide
  berth get pods -n ui -l app.kubernetes.io/name=ui
  berth get pods -A --field-selector=status.phase=Pending`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := g.options(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			opts.ReadOnly, opts.Scope, opts.PrintOnly = true, app.GetScope(args), true
			a, err := app.Open(opts)
			if err != nil {
				return err
			}
			defer a.Close()
			o.Args, o.Namespace = args, g.namespace
			return a.Get(o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "list across all namespaces")
	f.StringVarP(&o.Selector, "selector", "l", "", "label selector")
	f.StringVar(&o.FieldSelector, "field-selector", "", "field selector (status.phase, spec.nodeName, metadata.name, metadata.namespace)")
	f.StringVarP(&o.Output, "output", "o", "", "wide|yaml|json|name|jsonpath=TEMPLATE")
	f.BoolVar(&o.ShowLabels, "show-labels", false, "add a LABELS column")
	f.StringSliceVarP(&o.LabelColumns, "label-columns", "L", nil, "label keys to show as columns")
	f.BoolVar(&o.NoHeaders, "no-headers", false, "omit the header row")
	return cmd
}

func newDescribeCmd(g *globals) *cobra.Command {
	o := app.DescribeRequest{}
	cmd := &cobra.Command{
		Use:   "describe TYPE [NAME...] | TYPE/NAME",
		Short: "Show details of objects as kubectl describe does",
		Example: `  berth describe pod -n ui -l app.kubernetes.io/name=ui
  berth describe node --selector kubernetes.io/arch=arm64`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args, o.Namespace = args, g.namespace
			opts := g.options(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			opts.ReadOnly, opts.Scope, opts.PrintOnly = true, app.DescribeScope(o), true
			a, err := app.Open(opts)
			if err != nil {
				return err
			}
			defer a.Close()
			return a.Describe(o)
		},
	}
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "label selector")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "across all namespaces")
	return cmd
}

func newRolloutCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "rollout", Short: "Rollout commands (status)"}
	var watch bool
	var timeout time.Duration
	status := &cobra.Command{
		Use:   "status TYPE/NAME",
		Short: "Show the status of a rollout; with --watch, run virtual time until it finishes",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(g, cmd, false, func(a *app.App) error {
				return a.RolloutStatus(app.RolloutRequest{Args: args, Namespace: g.namespace, Watch: watch, Timeout: timeout})
			})
		},
	}
	status.Flags().BoolVarP(&watch, "watch", "w", true, "watch the rollout until it finishes (in virtual time)")
	status.Flags().DurationVar(&timeout, "timeout", 0, "give up after this much virtual time (0 = no limit)")
	cmd.AddCommand(status)
	return cmd
}

func newDeleteCmd(g *globals) *cobra.Command {
	o := app.DeleteRequest{}
	grace := -1
	cmd := &cobra.Command{
		Use:   "delete (TYPE NAME... | TYPE/NAME | -f FILENAME)",
		Short: "Delete objects, then run the cluster until it settles",
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(g, cmd, false, func(a *app.App) error {
				o.Args, o.Namespace = args, g.namespace
				if cmd.Flags().Changed("grace-period") {
					o.GracePeriod = &grace
				}
				return a.Delete(o)
			})
		},
	}
	cmd.Flags().StringArrayVarP(&o.Files, "filename", "f", nil, "delete the objects in these files")
	cmd.Flags().StringVarP(&o.Kustomize, "kustomize", "k", "", "delete the objects of a Kustomize directory")
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "label selector")
	cmd.Flags().BoolVar(&o.All, "all", false, "delete all objects of the type in the namespace")
	cmd.Flags().IntVar(&grace, "grace-period", -1, "seconds a pod is given to terminate (-1: its own terminationGracePeriodSeconds; 0 needs --force)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "with --grace-period=0, remove pods at once without waiting for their kubelet")
	return cmd
}

func newEventsCmd(g *globals) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "events",
		Short: "List events as kubectl events does",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(g, cmd, true, func(a *app.App) error {
				return a.Events(g.namespace, all)
			})
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "events of every namespace")
	return cmd
}

func newAdvanceCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "advance DURATION",
		Short:   "Move virtual time forward (timers fire, pods start, evictions happen)",
		Example: "  berth advance 5m",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := time.ParseDuration(args[0])
			if err != nil {
				return fmt.Errorf("invalid duration %q: use Go syntax such as 30s, 5m, 1h30m", args[0])
			}
			if d < 0 {
				return errBackwards(args[0])
			}
			// Only the state's head is read first: an idle advance moves
			// the clock alone (docs/state.md#idle-advance).
			opts := g.options(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			opts.HeadFirst = true
			a, err := app.Open(opts)
			if err != nil {
				return err
			}
			defer a.Close()
			return a.Advance(d)
		},
	}
	// "-5m" reaches the flag parser first, which would call it an unknown
	// shorthand flag; say what is really wrong.
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		const marker = " in -"
		msg := err.Error()
		if i := strings.LastIndex(msg, marker); strings.HasPrefix(msg, "unknown shorthand flag") && i >= 0 {
			arg := msg[i+len(marker)-1:]
			if d, perr := time.ParseDuration(arg); perr == nil && d < 0 {
				return errBackwards(arg)
			}
		}
		return err
	})
	return cmd
}

// errBackwards refuses a negative `advance`: virtual time only moves forward.
func errBackwards(arg string) error {
	return fmt.Errorf("advance: duration %q is negative: virtual time cannot go backwards", arg)
}

func newResetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "reset",
		Short: "Delete the simulated cluster state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return app.Reset(g.options(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
}

func newDemoCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Run the Graviton walk-through (seed 000) on the bundled example cluster, in a throw-away state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(g, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print berth's version and the Kubernetes versions it models",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "berth %s (models Kubernetes %s; default %s)\n", app.Version, app.SupportedVersions(), app.DefaultKubernetesVersion())
		},
	}
}
