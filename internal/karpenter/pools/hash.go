package pools

import (
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/poolhash"
)

// Drift annotations: the NodePool's template hash and its version, which
// Karpenter also writes on every NodeClaim it creates
// (docs/karpenter-disruption.md#drift).
const (
	AnnotationNodePoolHash        = poolhash.AnnotationNodePoolHash
	AnnotationNodePoolHashVersion = poolhash.AnnotationNodePoolHashVersion
	// NodePoolHashVersion is v1.6's hash version.
	NodePoolHashVersion = poolhash.NodePoolHashVersion
)

// NodePoolHash is the karpenter.sh/nodepool-hash value genuine Karpenter
// v1.6 computes for np: its template's labels, annotations, taints and
// startup taints (as sets), node class reference, terminationGracePeriod and
// expireAfter. Requirements are left out (they drift through the labels
// instead), as is everything outside the template (weight, limits,
// disruption). See package poolhash for how the number is made.
func NodePoolHash(np *karpv1.NodePool) string { return poolhash.NodePool(np) }
