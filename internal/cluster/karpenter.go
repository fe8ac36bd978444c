package cluster

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// KarpenterState is what Karpenter keeps in memory between reconciles and
// that changes observable results; berth persists it so that a run resumed
// from disk behaves as one that never stopped.
type KarpenterState struct {
	// HostnameSeq numbers the placeholder hostnames of simulated NodeClaims
	// (they appear in error messages).
	HostnameSeq int64 `json:"hostnameSeq,omitempty"`
	// Batch is the provisioner's open batching window, if any.
	Batch *KarpenterBatch `json:"batch,omitempty"`
	// Requeue is when each provisionable pod next triggers the provisioner
	// (its pod controller requeues every 10 s), by uid.
	Requeue map[types.UID]time.Time `json:"requeue,omitempty"`
	// Nominated is, per node or NodeClaim name, when its nomination ends:
	// a node pods were nominated to is neither empty nor disruptable.
	Nominated map[string]time.Time `json:"nominated,omitempty"`
	// Dedupe is when each deduplicated event may be published again, by
	// key (reason and dedupe values, as Karpenter's recorder keys them).
	Dedupe map[string]time.Time `json:"dedupe,omitempty"`
	// PodSets fingerprints the pods on each NodeClaim's node, to notice
	// when a pod is bound there or leaves (lastPodEventTime).
	PodSets map[string]string `json:"podSets,omitempty"`
	// EmptinessCommand is an emptiness decision waiting for its validation.
	EmptinessCommand *KarpenterCommand `json:"emptinessCommand,omitempty"`
	// ConsolidationCommand is a consolidation decision waiting for its
	// 15-second validation.
	ConsolidationCommand *KarpenterCommand `json:"consolidationCommand,omitempty"`
	// Disrupting are the commands being carried out: their replacements
	// are launching and their candidates wait for them.
	Disrupting []KarpenterCommand `json:"disrupting,omitempty"`
	// DisruptionPolledAt is when the disruption methods last ran (they
	// poll every 10 s); DisruptionState fingerprints what they saw when
	// they last found nothing to do, so an unchanged cluster is not
	// simulated again.
	DisruptionPolledAt time.Time `json:"disruptionPolledAt,omitempty"`
	DisruptionState    string    `json:"disruptionState,omitempty"`
	// AWS is the AWS provider's memory and the EC2 facts the user set
	// (karpenter_aws.go).
	AWS *KarpenterAWS `json:"aws,omitempty"`
}

// KarpenterCommand is a disruption decision over some NodeClaims, carried
// out at ValidateAt if it still holds.
type KarpenterCommand struct {
	NodeClaims []string  `json:"nodeClaims"`
	ValidateAt time.Time `json:"validateAt"`
	// Method ("single", "multi", "drift") and Reason (Underutilized,
	// Drifted) of a consolidation or drift command.
	Method string `json:"method,omitempty"`
	Reason string `json:"reason,omitempty"`
	// ReplacementTypes are the instance types the replacement may take,
	// when the command replaces its nodes.
	ReplacementTypes []string `json:"replacementTypes,omitempty"`
	// Replacements name the NodeClaims launched for the command, and
	// Started is when it started; it is abandoned 10 minutes later.
	Replacements []string  `json:"replacements,omitempty"`
	Started      time.Time `json:"started,omitempty"`
}

// KarpenterBatch is one batching window: it ends Idle after the last new
// pod or Max after it opened, whichever comes first.
type KarpenterBatch struct {
	Start       time.Time   `json:"start"`
	LastTrigger time.Time   `json:"lastTrigger"`
	Pods        []types.UID `json:"pods,omitempty"`
}
