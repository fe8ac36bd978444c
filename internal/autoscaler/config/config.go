// Package config reads cluster-autoscaler's command line from its
// Deployment, as the cluster-autoscaler binary parses it: every flag berth
// simulates with cluster-autoscaler's default when it is not given, every
// other genuine flag accepted without effect, and anything else refused with
// an error naming the flag (docs/cluster-autoscaler.md#flags).
package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Expander names cluster-autoscaler accepts (--expander).
const (
	ExpanderRandom     = "random"
	ExpanderMostPods   = "most-pods"
	ExpanderLeastWaste = "least-waste"
	ExpanderLeastNodes = "least-nodes"
	ExpanderPriority   = "priority"
	ExpanderPrice      = "price"
	ExpanderGRPC       = "grpc"
)

// Options are the flags berth simulates.
type Options struct {
	ScanInterval                 time.Duration
	Expanders                    []string
	BalanceSimilarNodeGroups     bool
	BalancingIgnoreLabels        []string
	BalancingLabels              []string
	MemoryDifferenceRatio        float64
	MaxAllocatableDifference     float64
	MaxFreeDifference            float64
	MaxNodeProvisionTime         time.Duration
	MaxNodesTotal                int
	MaxNodesPerScaleUp           int
	CoresMin, CoresMax           int64
	MemoryMinGiB, MemoryMaxGiB   int64
	ExpendablePodsPriorityCutoff int
	NewPodScaleUpDelay           time.Duration
	EnforceNodeGroupMinSize      bool
	ScaleUpFromZero              bool
	InitialBackoff, MaxBackoff   time.Duration
	BackoffResetTimeout          time.Duration
	// MaxTotalUnreadyPercentage and OkTotalUnreadyCount decide when the
	// cluster (or a group) is unhealthy in the status ConfigMap.
	MaxTotalUnreadyPercentage float64
	OkTotalUnreadyCount       int

	ScaleDownEnabled                  bool
	ScaleDownUtilizationThreshold     float64
	ScaleDownGPUUtilizationThreshold  float64
	ScaleDownUnneededTime             time.Duration
	ScaleDownUnreadyTime              time.Duration
	ScaleDownDelayAfterAdd            time.Duration
	ScaleDownDelayAfterDelete         time.Duration
	ScaleDownDelayAfterFailure        time.Duration
	UnremovableNodeRecheckTimeout     time.Duration
	IgnoreDaemonSetsUtilization       bool
	IgnoreMirrorPodsUtilization       bool
	SkipNodesWithSystemPods           bool
	SkipNodesWithLocalStorage         bool
	SkipNodesWithCustomControllerPods bool
	MaxScaleDownParallelism           int
	MaxDrainParallelism               int
	MaxGracefulTerminationSec         int
	NodeDeleteDelayAfterTaint         time.Duration
	MaxPodEvictionTime                time.Duration
	DaemonSetEvictionForOccupiedNodes bool
	DaemonSetEvictionForEmptyNodes    bool

	WriteStatusConfigMap bool
	StatusConfigMapName  string
	Namespace            string

	// NodeGroups are the --nodes specs, in order.
	NodeGroups []NodeGroupSpec
	// AutoDiscovery are the --node-group-auto-discovery specs, in order.
	AutoDiscovery []AutoDiscoverySpec
}

// NodeGroupSpec is one --nodes=<min>:<max>:<name>.
type NodeGroupSpec struct {
	Min, Max int
	Name     string
}

// AutoDiscoverySpec is one --node-group-auto-discovery=asg:tag=<key>[=<value>],...:
// an ASG matches when it has every key (with the value, when one is given).
type AutoDiscoverySpec struct {
	Tags []TagFilter
}

// TagFilter is one tag of an auto-discovery spec; an empty Value matches any value.
type TagFilter struct {
	Key, Value string
}

// Defaults returns cluster-autoscaler's defaults (its FAQ's parameter table).
func Defaults() Options {
	return Options{
		ScanInterval:                      10 * time.Second,
		Expanders:                         []string{ExpanderLeastWaste},
		MemoryDifferenceRatio:             0.015,
		MaxAllocatableDifference:          0.05,
		MaxFreeDifference:                 0.05,
		MaxNodeProvisionTime:              15 * time.Minute,
		MaxNodesPerScaleUp:                1000,
		CoresMin:                          0,
		CoresMax:                          320000,
		MemoryMinGiB:                      0,
		MemoryMaxGiB:                      6400000,
		ExpendablePodsPriorityCutoff:      -10,
		ScaleUpFromZero:                   true,
		MaxTotalUnreadyPercentage:         45,
		OkTotalUnreadyCount:               3,
		InitialBackoff:                    5 * time.Minute,
		MaxBackoff:                        30 * time.Minute,
		BackoffResetTimeout:               3 * time.Hour,
		ScaleDownEnabled:                  true,
		ScaleDownUtilizationThreshold:     0.5,
		ScaleDownGPUUtilizationThreshold:  0.5,
		ScaleDownUnneededTime:             10 * time.Minute,
		ScaleDownUnreadyTime:              20 * time.Minute,
		ScaleDownDelayAfterAdd:            10 * time.Minute,
		ScaleDownDelayAfterFailure:        3 * time.Minute,
		UnremovableNodeRecheckTimeout:     5 * time.Minute,
		SkipNodesWithSystemPods:           true,
		SkipNodesWithLocalStorage:         true,
		SkipNodesWithCustomControllerPods: true,
		MaxScaleDownParallelism:           10,
		MaxDrainParallelism:               1,
		MaxGracefulTerminationSec:         600,
		NodeDeleteDelayAfterTaint:         5 * time.Second,
		MaxPodEvictionTime:                2 * time.Minute,
		DaemonSetEvictionForOccupiedNodes: true,
		WriteStatusConfigMap:              true,
		StatusConfigMapName:               "cluster-autoscaler-status",
		Namespace:                         "kube-system",
	}
}

// setter applies one flag's value to the options.
type setter struct {
	isBool bool
	set    func(o *Options, v string) error
}

func durationFlag(f func(o *Options) *time.Duration) setter {
	return setter{set: func(o *Options, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("invalid duration %q", v)
		}
		*f(o) = d
		return nil
	}}
}

func boolFlag(f func(o *Options) *bool) setter {
	return setter{isBool: true, set: func(o *Options, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("invalid boolean %q", v)
		}
		*f(o) = b
		return nil
	}}
}

func floatFlag(f func(o *Options) *float64) setter {
	return setter{set: func(o *Options, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("invalid number %q", v)
		}
		*f(o) = x
		return nil
	}}
}

func intFlag(f func(o *Options) *int) setter {
	return setter{set: func(o *Options, v string) error {
		x, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid integer %q", v)
		}
		*f(o) = x
		return nil
	}}
}

func listFlag(f func(o *Options) *[]string) setter {
	return setter{set: func(o *Options, v string) error {
		*f(o) = append(*f(o), v)
		return nil
	}}
}

// modelled are the flags berth simulates.
var modelled = map[string]setter{
	"scan-interval":                          durationFlag(func(o *Options) *time.Duration { return &o.ScanInterval }),
	"max-node-provision-time":                durationFlag(func(o *Options) *time.Duration { return &o.MaxNodeProvisionTime }),
	"new-pod-scale-up-delay":                 durationFlag(func(o *Options) *time.Duration { return &o.NewPodScaleUpDelay }),
	"initial-node-group-backoff-duration":    durationFlag(func(o *Options) *time.Duration { return &o.InitialBackoff }),
	"max-node-group-backoff-duration":        durationFlag(func(o *Options) *time.Duration { return &o.MaxBackoff }),
	"node-group-backoff-reset-timeout":       durationFlag(func(o *Options) *time.Duration { return &o.BackoffResetTimeout }),
	"scale-down-unneeded-time":               durationFlag(func(o *Options) *time.Duration { return &o.ScaleDownUnneededTime }),
	"scale-down-unready-time":                durationFlag(func(o *Options) *time.Duration { return &o.ScaleDownUnreadyTime }),
	"scale-down-delay-after-add":             durationFlag(func(o *Options) *time.Duration { return &o.ScaleDownDelayAfterAdd }),
	"scale-down-delay-after-delete":          durationFlag(func(o *Options) *time.Duration { return &o.ScaleDownDelayAfterDelete }),
	"scale-down-delay-after-failure":         durationFlag(func(o *Options) *time.Duration { return &o.ScaleDownDelayAfterFailure }),
	"unremovable-node-recheck-timeout":       durationFlag(func(o *Options) *time.Duration { return &o.UnremovableNodeRecheckTimeout }),
	"node-delete-delay-after-taint":          durationFlag(func(o *Options) *time.Duration { return &o.NodeDeleteDelayAfterTaint }),
	"max-pod-eviction-time":                  durationFlag(func(o *Options) *time.Duration { return &o.MaxPodEvictionTime }),
	"balance-similar-node-groups":            boolFlag(func(o *Options) *bool { return &o.BalanceSimilarNodeGroups }),
	"enforce-node-group-min-size":            boolFlag(func(o *Options) *bool { return &o.EnforceNodeGroupMinSize }),
	"scale-up-from-zero":                     boolFlag(func(o *Options) *bool { return &o.ScaleUpFromZero }),
	"scale-down-enabled":                     boolFlag(func(o *Options) *bool { return &o.ScaleDownEnabled }),
	"ignore-daemonsets-utilization":          boolFlag(func(o *Options) *bool { return &o.IgnoreDaemonSetsUtilization }),
	"ignore-mirror-pods-utilization":         boolFlag(func(o *Options) *bool { return &o.IgnoreMirrorPodsUtilization }),
	"skip-nodes-with-system-pods":            boolFlag(func(o *Options) *bool { return &o.SkipNodesWithSystemPods }),
	"skip-nodes-with-local-storage":          boolFlag(func(o *Options) *bool { return &o.SkipNodesWithLocalStorage }),
	"skip-nodes-with-custom-controller-pods": boolFlag(func(o *Options) *bool { return &o.SkipNodesWithCustomControllerPods }),
	"daemonset-eviction-for-occupied-nodes":  boolFlag(func(o *Options) *bool { return &o.DaemonSetEvictionForOccupiedNodes }),
	"daemonset-eviction-for-empty-nodes":     boolFlag(func(o *Options) *bool { return &o.DaemonSetEvictionForEmptyNodes }),
	"write-status-configmap":                 boolFlag(func(o *Options) *bool { return &o.WriteStatusConfigMap }),
	"scale-down-utilization-threshold":       floatFlag(func(o *Options) *float64 { return &o.ScaleDownUtilizationThreshold }),
	"scale-down-gpu-utilization-threshold":   floatFlag(func(o *Options) *float64 { return &o.ScaleDownGPUUtilizationThreshold }),
	"memory-difference-ratio":                floatFlag(func(o *Options) *float64 { return &o.MemoryDifferenceRatio }),
	"max-allocatable-difference-ratio":       floatFlag(func(o *Options) *float64 { return &o.MaxAllocatableDifference }),
	"max-free-difference-ratio":              floatFlag(func(o *Options) *float64 { return &o.MaxFreeDifference }),
	"max-total-unready-percentage":           floatFlag(func(o *Options) *float64 { return &o.MaxTotalUnreadyPercentage }),
	"ok-total-unready-count":                 intFlag(func(o *Options) *int { return &o.OkTotalUnreadyCount }),
	"max-nodes-total":                        intFlag(func(o *Options) *int { return &o.MaxNodesTotal }),
	"max-nodes-per-scaleup":                  intFlag(func(o *Options) *int { return &o.MaxNodesPerScaleUp }),
	"expendable-pods-priority-cutoff":        intFlag(func(o *Options) *int { return &o.ExpendablePodsPriorityCutoff }),
	"max-scale-down-parallelism":             intFlag(func(o *Options) *int { return &o.MaxScaleDownParallelism }),
	"max-drain-parallelism":                  intFlag(func(o *Options) *int { return &o.MaxDrainParallelism }),
	"max-graceful-termination-sec":           intFlag(func(o *Options) *int { return &o.MaxGracefulTerminationSec }),
	"balancing-ignore-label":                 listFlag(func(o *Options) *[]string { return &o.BalancingIgnoreLabels }),
	"balancing-label":                        listFlag(func(o *Options) *[]string { return &o.BalancingLabels }),
	"status-config-map-name":                 {set: func(o *Options, v string) error { o.StatusConfigMapName = v; return nil }},
	"namespace":                              {set: func(o *Options, v string) error { o.Namespace = v; return nil }},
	"expander":                               {set: setExpanders},
	"cores-total":                            {set: func(o *Options, v string) error { return minMax(v, &o.CoresMin, &o.CoresMax) }},
	"memory-total":                           {set: func(o *Options, v string) error { return minMax(v, &o.MemoryMinGiB, &o.MemoryMaxGiB) }},
	"nodes":                                  {set: addNodeGroupSpec},
	"node-group-auto-discovery":              {set: addAutoDiscovery},
	"cloud-provider": {set: func(_ *Options, v string) error {
		if v != "aws" {
			return fmt.Errorf("berth simulates the aws cloud provider only, got %q", v)
		}
		return nil
	}},
	"estimator": {set: func(_ *Options, v string) error {
		if v != "binpacking" {
			return fmt.Errorf("unknown estimator %q (cluster-autoscaler has only binpacking)", v)
		}
		return nil
	}},
}

// booleanUnmodelled are the genuine boolean flags berth accepts without
// effect; they may be given without a value.
var booleanUnmodelled = map[string]bool{
	"add-dir-header": true, "alsologtostderr": true, "async-node-groups": true, "aws-use-static-instance-list": true,
	"bulk-mig-instances-listing-enabled": true, "capacity-buffer-controller-enabled": true,
	"capacity-buffer-pod-dry-run-enabled": true, "capacity-buffer-pod-injection-enabled": true,
	"capacity-quotas-enabled": true, "check-capacity-batch-processing": true, "clusterapi-cloud-config-authoritative": true,
	"cordon-node-before-terminating": true, "debugging-snapshot-enabled": true,
	"dynamic-node-delete-delay-after-taint-enabled": true, "emit-per-nodegroup-metrics": true,
	"enable-csi-node-aware-scheduling": true, "enable-dynamic-resource-allocation": true, "enable-proactive-scaleup": true,
	"enable-provisioning-requests": true, "fastpath-binpacking-enabled": true, "force-delete-failed-nodes": true,
	"force-delete-unregistered-nodes": true, "force-ds": true, "frequent-loops-enabled": true, "leader-elect": true,
	"log-json-split-stream": true, "log-text-split-stream": true, "logtostderr": true,
	"max-node-skip-eval-time-tracker-enabled": true, "node-removal-latency-tracking-enabled": true, "one-output": true,
	"parallel-scale-up": true, "profiling": true, "record-duplicated-events": true, "regional": true,
	"scale-down-delay-type-local": true, "scale-down-unready-enabled": true, "scale-from-unschedulable": true,
	"skip-headers": true, "skip-log-headers": true,
}

var known = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range knownFlags {
		m[n] = true
	}
	return m
}()

// FlagError is a flag berth cannot take: unknown, or with a malformed value.
type FlagError struct {
	Flag    string
	Message string
}

func (e *FlagError) Error() string { return fmt.Sprintf("flag --%s: %s", e.Flag, e.Message) }

// Parse reads a cluster-autoscaler command line (the container's command
// followed by its args). A leading program path is skipped; positional
// arguments after the flags are refused, as the binary refuses them.
func Parse(argv []string) (Options, error) {
	o := Defaults()
	args := argv
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return o, fmt.Errorf("unexpected argument %q after --", args[i+1])
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return o, fmt.Errorf("unexpected argument %q (cluster-autoscaler takes flags only)", a)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		value, hasValue := "", false
		if eq := strings.IndexByte(name, '='); eq >= 0 {
			name, value, hasValue = name[:eq], name[eq+1:], true
		}
		if !known[name] {
			return o, &FlagError{Flag: name, Message: "unknown flag (not a cluster-autoscaler flag)"}
		}
		st, isModelled := modelled[name]
		isBool := booleanUnmodelled[name] || (isModelled && st.isBool)
		if !hasValue {
			switch {
			case isBool:
				value = "true"
			case i+1 < len(args):
				i++
				value = args[i]
			default:
				return o, &FlagError{Flag: name, Message: "flag needs an argument"}
			}
		}
		if !isModelled {
			if isBool {
				if _, err := strconv.ParseBool(value); err != nil {
					return o, &FlagError{Flag: name, Message: fmt.Sprintf("invalid boolean %q", value)}
				}
			}
			continue
		}
		if err := st.set(&o, value); err != nil {
			return o, &FlagError{Flag: name, Message: err.Error()}
		}
	}
	if err := o.check(); err != nil {
		return o, err
	}
	return o, nil
}

// check refuses values cluster-autoscaler refuses at start-up, or that
// would make no sense to simulate.
func (o *Options) check() error {
	if o.ScanInterval <= 0 {
		return &FlagError{Flag: "scan-interval", Message: "must be positive"}
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"scale-down-utilization-threshold", o.ScaleDownUtilizationThreshold},
		{"scale-down-gpu-utilization-threshold", o.ScaleDownGPUUtilizationThreshold}} {
		if r.v < 0 || r.v > 1 {
			return &FlagError{Flag: r.name, Message: fmt.Sprintf("must be between 0 and 1, got %v", r.v)}
		}
	}
	if o.MaxNodesTotal < 0 {
		return &FlagError{Flag: "max-nodes-total", Message: "cannot be negative"}
	}
	if o.MaxNodesPerScaleUp <= 0 {
		return &FlagError{Flag: "max-nodes-per-scaleup", Message: "must be positive"}
	}
	if o.MaxScaleDownParallelism <= 0 {
		return &FlagError{Flag: "max-scale-down-parallelism", Message: "must be positive"}
	}
	if o.MaxDrainParallelism <= 0 {
		return &FlagError{Flag: "max-drain-parallelism", Message: "must be positive"}
	}
	return nil
}

func setExpanders(o *Options, v string) error {
	var names []string
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		switch n {
		case ExpanderRandom, ExpanderMostPods, ExpanderLeastWaste, ExpanderLeastNodes, ExpanderPriority:
			names = append(names, n)
		case ExpanderPrice:
			return fmt.Errorf("expander %q cannot run on AWS: the aws cloud provider has no pricing model", n)
		case ExpanderGRPC:
			return fmt.Errorf("expander %q needs an external gRPC service, which berth does not simulate", n)
		default:
			return fmt.Errorf("unknown expander %q (known: %s)", n, strings.Join([]string{ExpanderRandom,
				ExpanderMostPods, ExpanderLeastWaste, ExpanderLeastNodes, ExpanderPriority, ExpanderPrice, ExpanderGRPC}, ", "))
		}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return fmt.Errorf("expander %q is listed more than once", n)
		}
		seen[n] = true
	}
	o.Expanders = names
	return nil
}

func minMax(v string, min, max *int64) error {
	parts := strings.Split(v, ":")
	if len(parts) != 2 {
		return fmt.Errorf("want <min>:<max>, got %q", v)
	}
	lo, err1 := strconv.ParseInt(parts[0], 10, 64)
	hi, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || lo < 0 || hi < lo {
		return fmt.Errorf("want <min>:<max> with 0 <= min <= max, got %q", v)
	}
	*min, *max = lo, hi
	return nil
}

func addNodeGroupSpec(o *Options, v string) error {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 || parts[2] == "" {
		return fmt.Errorf("want <min>:<max>:<asg-name>, got %q", v)
	}
	lo, err1 := strconv.Atoi(parts[0])
	hi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("want <min>:<max>:<asg-name> with integer sizes, got %q", v)
	}
	if lo < 0 || hi < lo {
		return fmt.Errorf("min size must be >= 0 and max size >= min size, got %q", v)
	}
	o.NodeGroups = append(o.NodeGroups, NodeGroupSpec{Min: lo, Max: hi, Name: parts[2]})
	return nil
}

var discoveryRE = regexp.MustCompile(`^asg:tag=(.+)$`)

func addAutoDiscovery(o *Options, v string) error {
	m := discoveryRE.FindStringSubmatch(v)
	if m == nil {
		return fmt.Errorf("want asg:tag=<key>[=<value>][,<key>[=<value>]...], got %q", v)
	}
	var spec AutoDiscoverySpec
	for _, kv := range strings.Split(m[1], ",") {
		k, val, _ := strings.Cut(kv, "=")
		if k == "" {
			return fmt.Errorf("empty tag key in %q", v)
		}
		spec.Tags = append(spec.Tags, TagFilter{Key: k, Value: val})
	}
	o.AutoDiscovery = append(o.AutoDiscovery, spec)
	return nil
}

// Matches tells whether an ASG with tags is discovered by the spec.
func (d AutoDiscoverySpec) Matches(tags map[string]string) bool {
	for _, f := range d.Tags {
		v, ok := tags[f.Key]
		if !ok || (f.Value != "" && v != f.Value) {
			return false
		}
	}
	return true
}
