package framework

// ObjectsEpoch is offered by handles that can say when the workload
// objects they return may have changed: the Services, ReplicaSets,
// StatefulSets and ReplicationControllers a handle returns stay the same
// while ObjectsEpoch returns the same value. Plugins may cache what they
// derive from those objects under it.
type ObjectsEpoch interface {
	ObjectsEpoch() uint64
}
