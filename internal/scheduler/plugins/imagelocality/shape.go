package imagelocality

import (
	"encoding/binary"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// AppendScoreShape implements framework.NodeLocalScorePlugin: the score
// reads the node's image states, the snapshot's node count and image
// spread (both fixed for a snapshot), and from the pod the normalized
// names of its images in order and its number of containers.
func (pl *ImageLocality) AppendScoreShape(_ *framework.CycleState, pod *framework.PodInfo, key []byte) ([]byte, bool) {
	spec := &pod.Pod.Spec
	key = binary.AppendUvarint(key, uint64(len(spec.InitContainers)+len(spec.Containers)))
	images := podImages(spec)
	key = binary.AppendUvarint(key, uint64(len(images)))
	for _, name := range images {
		key = binary.AppendUvarint(key, uint64(len(name)))
		key = append(key, name...)
	}
	return key, true
}
