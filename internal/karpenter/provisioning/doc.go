// Package provisioning is Karpenter's provisioning scheduler: given the
// pods kube-scheduler could not place, the cluster's nodes and in-flight
// NodeClaims, and the NodePools with their instance types, Solve decides
// which pods go to existing capacity and which new NodeClaims to launch
// (docs/karpenter-provisioning.md). It reads nothing but its input and
// writes nothing; the provisioner controller turns its Results into
// NodeClaims and events.
package provisioning
