package imagelocality

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestNormalizedImageName(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                     "nginx:latest",
		"nginx:1.25":                "nginx:1.25",
		"localhost:5000/app":        "localhost:5000/app:latest",
		"localhost:5000/app:v1":     "localhost:5000/app:v1",
		"registry.k8s.io/pause:3.9": "registry.k8s.io/pause:3.9",
	} {
		if got := NormalizedImageName(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		name      string
		images    []string
		imageSize int64
		numNodes  int // nodes holding the image
		total     int
		want      int64
	}{
		{"image absent", []string{"app:v1"}, 0, 0, 2, 0},
		{"small image", []string{"app:v1"}, 20 * mb, 1, 1, 0},
		{"250MB on every node", []string{"app:v1"}, 250 * mb, 2, 2, 100 * (250 - 23) / (1000 - 23)},
		{"500MB on half the nodes", []string{"app:v1"}, 500 * mb, 1, 2, 100 * (250 - 23) / (1000 - 23)},
		{"huge image capped", []string{"app:v1"}, 3000 * mb, 1, 1, 100},
		{"two containers double the cap", []string{"app:v1", "other"}, 1000 * mb, 1, 1, 100 * (1000 - 23) / (2000 - 23)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugintest.SizedPod("p", "", "")
			p.Spec.Containers = nil
			for _, img := range tt.images {
				p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: img, Image: img})
			}
			var nis []*framework.NodeInfo
			for i := 0; i < tt.total; i++ {
				nis = append(nis, framework.NewNodeInfo(plugintest.SizedNode(string(rune('a'+i)), "1", "1Gi", 10)))
			}
			if tt.numNodes > 0 {
				nis[0].ImageStates = map[string]*framework.ImageStateSummary{"app:v1": {Size: tt.imageSize, NumNodes: tt.numNodes}}
			}
			pl := New(plugintest.NewVersionHandle("1.36", nis)).(*ImageLocality)
			got, _ := pl.Score(nil, framework.NewPodInfo(p, true), nis[0])
			if got != tt.want {
				t.Fatalf("score %d, want %d", got, tt.want)
			}
		})
	}
}
