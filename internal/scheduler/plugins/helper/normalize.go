// Package helper holds small pieces shared by scheduler plugins and the core:
// score normalization and the FailedScheduling message assembly.
package helper

import "github.com/berth-sim/berth/internal/scheduler/framework"

// DefaultNormalizeScore scales scores to [0, maxPriority] relative to the
// highest one; reverse flips them so that the lowest raw score wins. With all
// scores 0 nothing is scaled (reverse then gives everyone maxPriority).
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores framework.NodeScoreList) {
	var maxCount int64
	for i := range scores {
		if scores[i].Score > maxCount {
			maxCount = scores[i].Score
		}
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return
	}
	for i := range scores {
		s := maxPriority * scores[i].Score / maxCount
		if reverse {
			s = maxPriority - s
		}
		scores[i].Score = s
	}
}
