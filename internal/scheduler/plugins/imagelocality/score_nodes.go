package imagelocality

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// ScoreNodes is Score over every node (framework.BatchScorePlugin): the
// pod's image names are normalized once for the cycle, not once per node,
// and summed in Score's order (init containers, containers, image volumes).
func (pl *ImageLocality) ScoreNodes(_ *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo, scores framework.NodeScoreList) *framework.Status {
	if len(nodes) == 0 {
		return nil
	}
	total := len(pl.handle.Nodes())
	spec := &pod.Pod.Spec
	containers := len(spec.InitContainers) + len(spec.Containers)
	images := podImages(spec)
	for i, ni := range nodes {
		var sum int64
		if len(ni.ImageStates) > 0 && total > 0 {
			for _, image := range images {
				if st, ok := ni.ImageStates[image]; ok {
					sum += int64(float64(st.Size) * float64(st.NumNodes) / float64(total))
				}
			}
		}
		scores[i].Score = calculatePriority(sum, containers)
	}
	return nil
}

// podImages lists the normalized names sumImageScores looks up, in its order.
func podImages(spec *v1.PodSpec) []string {
	out := make([]string, 0, len(spec.InitContainers)+len(spec.Containers))
	for _, c := range spec.InitContainers {
		out = append(out, NormalizedImageName(c.Image))
	}
	for _, c := range spec.Containers {
		out = append(out, NormalizedImageName(c.Image))
	}
	for _, v := range spec.Volumes {
		if v.Image != nil {
			out = append(out, NormalizedImageName(v.Image.Reference))
		}
	}
	return out
}
