package imagelocality

import (
	"encoding/binary"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// AppendScoreShape implements framework.NodeLocalScorePlugin: the score
// reads the node's image states, the snapshot's node count and image
// spread (both fixed for a snapshot), and from the pod its number of
// containers and the images podImages lists. The key spells the images as
// written (the normalized names are a function of them), in podImages'
// order, without building that list.
func (pl *ImageLocality) AppendScoreShape(_ *framework.CycleState, pod *framework.PodInfo, key []byte) ([]byte, bool) {
	spec := &pod.Pod.Spec
	key = binary.AppendUvarint(key, uint64(len(spec.InitContainers)+len(spec.Containers)))
	image := func(name string) {
		key = binary.AppendUvarint(key, uint64(len(name)))
		key = append(key, name...)
	}
	for i := range spec.InitContainers {
		image(spec.InitContainers[i].Image)
	}
	for i := range spec.Containers {
		image(spec.Containers[i].Image)
	}
	// Volumes come after a marker, so that a volume's image cannot pass
	// for a container's.
	key = append(key, 0xff)
	for i := range spec.Volumes {
		if v := spec.Volumes[i].Image; v != nil {
			image(v.Reference)
		}
	}
	return key, true
}
