// Package imagelocality favours nodes that already hold the pod's images,
// weighted by how widely each image is spread over the cluster.
package imagelocality

import (
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Name is the plugin's name in the profile.
const Name = "ImageLocality"

const mb int64 = 1024 * 1024

// Thresholds bound the summed image size that maps onto 0..100.
const (
	minThreshold          = 23 * mb
	maxContainerThreshold = 1000 * mb
)

// ImageLocality is the plugin.
type ImageLocality struct {
	handle framework.Handle
}

// New builds the plugin.
func New(h framework.Handle) framework.Plugin { return &ImageLocality{handle: h} }

func (*ImageLocality) Name() string { return Name }

// Score sums the spread-scaled sizes of the pod's images present on the node.
func (pl *ImageLocality) Score(_ *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	total := len(pl.handle.Nodes())
	spec := &pod.Pod.Spec
	return calculatePriority(sumImageScores(nodeInfo, spec, total), len(spec.InitContainers)+len(spec.Containers)), nil
}

// ScoreExtensions: no normalization.
func (pl *ImageLocality) ScoreExtensions() framework.ScoreExtensions { return nil }

func calculatePriority(sum int64, numContainers int) int64 {
	maxThreshold := maxContainerThreshold * int64(numContainers)
	if sum < minThreshold {
		sum = minThreshold
	} else if sum > maxThreshold {
		sum = maxThreshold
	}
	if maxThreshold <= minThreshold {
		return 0
	}
	return framework.MaxNodeScore * (sum - minThreshold) / (maxThreshold - minThreshold)
}

func sumImageScores(nodeInfo *framework.NodeInfo, spec *v1.PodSpec, totalNodes int) int64 {
	if len(nodeInfo.ImageStates) == 0 || totalNodes == 0 {
		return 0
	}
	var sum int64
	add := func(image string) {
		if st, ok := nodeInfo.ImageStates[NormalizedImageName(image)]; ok {
			sum += int64(float64(st.Size) * float64(st.NumNodes) / float64(totalNodes))
		}
	}
	for _, c := range spec.InitContainers {
		add(c.Image)
	}
	for _, c := range spec.Containers {
		add(c.Image)
	}
	for _, v := range spec.Volumes {
		if v.Image != nil {
			add(v.Image.Reference)
		}
	}
	return sum
}

// NormalizedImageName appends ":latest" when the name carries no tag.
func NormalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}
