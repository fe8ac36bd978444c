// Package examples embeds the bundled example clusters so that `berth demo`
// and a state created without a ClusterConfig work from a bare binary.
package examples

import "embed"

// FS holds every example directory.
//
//go:embed graviton
var FS embed.FS

// DefaultCluster is the ClusterConfig used when a new state gets workloads
// before any cluster definition.
const DefaultCluster = "graviton/cluster.yaml"
