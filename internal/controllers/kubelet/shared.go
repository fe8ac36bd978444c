package kubelet

import (
	"sync"
	"sync/atomic"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/version"
)

// Values the kubelet derives again and again from the same few inputs,
// computed once and shared (docs/simulation-speed.md#kubelet-work-per-pod):
// every event about a container carries its field path, every running
// container's status its image ID, and the version's features are asked
// for several times per pod.

// features are the cluster version's feature gates.
func features(s *cluster.State) version.Features {
	// Asked several times per pod: the last answer is kept for its version
	// string (one cluster version per command).
	if c := lastFeatures.Load(); c != nil && c.version == s.Info.KubernetesVersion {
		return c.features
	}
	v, err := version.Parse(s.Info.KubernetesVersion)
	if err != nil {
		v, _ = version.Parse(cluster.DefaultKubernetesVersion)
	}
	f := version.FeaturesFor(v)
	lastFeatures.Store(&featuresOf{s.Info.KubernetesVersion, f})
	return f
}

type featuresOf struct {
	version  string
	features version.Features
}

var lastFeatures atomic.Pointer[featuresOf]

// containerFieldPath is "spec.containers{NAME}", one shared string per
// container name (every event about a container carries it).
func containerFieldPath(name string) string {
	if p, ok := fieldPaths.Load(name); ok {
		return p.(string)
	}
	p := "spec.containers{" + name + "}"
	fieldPaths.Store(name, p)
	return p
}

var fieldPaths, imageIDs sync.Map

// imageID is a stable made-up digest reference for an image, one shared
// string per image (every running container's status carries it).
func imageID(image string) string {
	if id, ok := imageIDs.Load(image); ok {
		return id.(string)
	}
	id := makeImageID(image)
	imageIDs.Store(image, id)
	return id
}
