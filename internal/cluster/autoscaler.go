package cluster

import "time"

// AutoscalerState is what cluster-autoscaler and the Auto Scaling groups
// it drives remember between loops (internal/autoscaler/controller).
type AutoscalerState struct {
	// NextScan is when the next main loop runs.
	NextScan time.Time `json:"nextScan,omitempty"`
	// Launching are instances an ASG started that have not registered yet.
	Launching []ASGInstance `json:"launching,omitempty"`
	// Unneeded is, by node name, since when the node has been unneeded.
	Unneeded map[string]time.Time `json:"unneeded,omitempty"`
	// Deleting is, by node name, the nodes being removed.
	Deleting map[string]NodeDeletion `json:"deleting,omitempty"`
	// Judged are the uids of the pending pods the last loop looked at.
	Judged map[string]bool `json:"judged,omitempty"`
	// LastScaleUp, LastScaleDown and LastScaleDownFailure drive the
	// scale-down delays.
	LastScaleUp          time.Time `json:"lastScaleUp,omitempty"`
	LastScaleDown        time.Time `json:"lastScaleDown,omitempty"`
	LastScaleDownFailure time.Time `json:"lastScaleDownFailure,omitempty"`
	// ScaleUpRequests are, by ASG name, the scale-ups still waiting for
	// their nodes (for --max-node-provision-time).
	ScaleUpRequests map[string]ScaleUpRequest `json:"scaleUpRequests,omitempty"`
	// Backoff is, by ASG name, the group's scale-up backoff after a failed
	// scale-up (docs/cluster-autoscaler.md#failed-scale-ups-and-backoff).
	Backoff map[string]GroupBackoff `json:"backoff,omitempty"`
	// LastGroupScaleUp and LastGroupScaleDown are, by eksctl node group
	// name, the last time cluster-autoscaler grew or shrank the group
	// (describe nodegroup; apply lets CA own the desired capacity then).
	LastGroupScaleUp   map[string]time.Time `json:"lastGroupScaleUp,omitempty"`
	LastGroupScaleDown map[string]time.Time `json:"lastGroupScaleDown,omitempty"`
	// Status is the last status cluster-autoscaler wrote, kept so that each
	// condition's lastTransitionTime survives between loops.
	Status *AutoscalerStatus `json:"status,omitempty"`
}

// GroupBackoff is one group's exponential scale-up backoff, as
// cluster-autoscaler keeps it: the current duration doubles when a group
// fails again after its backoff ran out, up to the maximum, and the record
// is forgotten once the reset timeout passes without a failure.
type GroupBackoff struct {
	Until        time.Time     `json:"until"`
	Duration     time.Duration `json:"duration"`
	LastFailure  time.Time     `json:"lastFailure"`
	ErrorClass   string        `json:"errorClass"`
	ErrorCode    string        `json:"errorCode"`
	ErrorMessage string        `json:"errorMessage"`
}

// Active reports whether the group is backed off at now.
func (b GroupBackoff) Active(now time.Time) bool { return !b.Until.Before(now) }

// AutoscalerStatus is what cluster-autoscaler remembers of its last status:
// each condition's status and since when it holds, by condition path
// ("clusterWide/health", "<asg>/scaleUp", ...).
type AutoscalerStatus struct {
	Conditions map[string]ConditionSince `json:"conditions,omitempty"`
}

// ConditionSince is one status condition and its last transition time.
type ConditionSince struct {
	Status string    `json:"status"`
	Since  time.Time `json:"since"`
}

// ASGInstance is one instance on its way to becoming a node.
type ASGInstance struct {
	NodeGroup string `json:"nodeGroup"`
	// ID is the EC2 instance id.
	ID string `json:"id,omitempty"`
	// Zone is where the ASG's zone balancing put the instance.
	Zone    string    `json:"zone"`
	ReadyAt time.Time `json:"readyAt"`
	// Failed marks a launch EC2 refused (no capacity in any of the group's
	// zones): the ASG's scaling activity failed and the instance never
	// comes up (docs/cluster-autoscaler.md#failed-scale-ups-and-backoff).
	Failed bool `json:"failed,omitempty"`
	// Seen is when cluster-autoscaler's loop first saw the instance
	// without a node; zero until then.
	Seen time.Time `json:"seen,omitempty"`
	// Reported is set once cluster-autoscaler reported the failed launch.
	Reported bool `json:"reported,omitempty"`
}

// ScaleUpRequest is one group's outstanding scale-up.
type ScaleUpRequest struct {
	Time     time.Time `json:"time"`
	Increase int       `json:"increase"`
}

// NodeDeletion is a node cluster-autoscaler tainted and drained; the ASG
// terminates its instance at At.
type NodeDeletion struct {
	NodeGroup string    `json:"nodeGroup"`
	At        time.Time `json:"at"`
	Drain     bool      `json:"drain,omitempty"`
}
