// Package instancetype is Karpenter's AWS view of EC2 instance types: per
// type the requirements (labels) it can satisfy, its offerings (zone x
// capacity type, with price and availability), capacity and overhead; plus
// the collection operations the provisioner uses (OrderByPrice, Compatible,
// Truncate, SatisfiesMinValues), spot pricing input and the 3-minute
// unavailable-offerings (ICE) cache.
//
// It mirrors sigs.k8s.io/karpenter pkg/cloudprovider/types.go and
// aws/karpenter-provider-aws pkg/providers/instancetype (types.go,
// offering/offering.go) and pkg/cache/unavailableofferings.go on the classic
// v1 line (v1.0–v1.6). Resource formulas live in internal/aws
// (KarpenterCapacity, KarpenterOverhead). See docs/karpenter-instance-types.md.
//
// Everything is deterministic: time is passed in, lists are sorted.
package instancetype
