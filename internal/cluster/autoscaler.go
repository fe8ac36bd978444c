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
	// ScaleUpRequests are, by node group, the scale-ups still waiting
	// for their nodes (for --max-node-provision-time).
	ScaleUpRequests map[string]ScaleUpRequest `json:"scaleUpRequests,omitempty"`
	// Backoff is, by node group, until when the group is not scaled up.
	Backoff map[string]time.Time `json:"backoff,omitempty"`
}

// ASGInstance is one instance on its way to becoming a node.
type ASGInstance struct {
	NodeGroup string    `json:"nodeGroup"`
	Zone      string    `json:"zone"`
	ReadyAt   time.Time `json:"readyAt"`
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
