package kubelet

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/version"
	corev1 "k8s.io/api/core/v1"
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

// The pull events' texts depend on the image (and the pull time) only:
// 100,000 pods of 200 Deployments need 200 of each, built once and shared
// by the events that carry them.
type pullMessageKey struct {
	image  string
	kind   uint8 // pulling, pulled, present (1.35 and later), presentOld
	pulled time.Duration
}

const (
	pullingMessage uint8 = iota
	pulledMessage
	presentMessage
	presentOldMessage
)

var pullMessages sync.Map // pullMessageKey → string

// pullMessage is the text of the kubelet's Pulling or Pulled event.
func pullMessage(kind uint8, image string, pulled time.Duration) string {
	k := pullMessageKey{image, kind, pulled}
	if m, ok := pullMessages.Load(k); ok {
		return m.(string)
	}
	m := makePullMessage(kind, image, pulled)
	pullMessages.Store(k, m)
	return m
}

func makePullMessage(kind uint8, image string, pulled time.Duration) string {
	switch kind {
	case pullingMessage:
		return fmt.Sprintf("Pulling image %q", image)
	case pulledMessage:
		return fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.", image, pulled, pulled, imageSize(image))
	case presentMessage:
		return fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", image)
	}
	return fmt.Sprintf("Container image %q already present on machine", image)
}

// appendHex64 appends 64 hex digits from four draws of the state's random
// source, as fmt's %016x four times would.
func appendHex64(dst []byte, s *cluster.State) []byte {
	const digits = "0123456789abcdef"
	for range 4 {
		v := s.Rand.Uint64()
		for shift := 60; shift >= 0; shift -= 4 {
			dst = append(dst, digits[(v>>uint(shift))&0xf])
		}
	}
	return dst
}

// newContainerID is "containerd://" and 64 random hex digits, in one string.
func newContainerID(s *cluster.State) string {
	const prefix = "containerd://"
	return string(appendHex64(append(make([]byte, 0, len(prefix)+64), prefix...), s))
}

// containerText is the Created and Started texts of one container name in
// one band of kubelet versions (containerMessages): from 1.30 to 1.34 both
// carry the name, so 100,000 containers named "app" would build 200,000
// strings that say the same two things.
type containerTextKey struct {
	band uint8 // 0: before 1.30, 1: 1.30 to 1.34, 2: 1.35 and later
	name string
}

var containerTextCache sync.Map // containerTextKey → [2]string

// containerTexts is containerMessages(v, name), one shared pair per band
// and name.
func containerTexts(v version.Version, name string) (created, started string) {
	var band uint8
	switch {
	case v.AtLeast(35, 0):
		return containerMessages(v, name) // constant texts: nothing to build
	case v.AtLeast(30, 0):
		band = 1
	}
	k := containerTextKey{band, name}
	if m, ok := containerTextCache.Load(k); ok {
		pair := m.([2]string)
		return pair[0], pair[1]
	}
	created, started = containerMessages(v, name)
	containerTextCache.Store(k, [2]string{created, started})
	return created, started
}

var unreadyMessages sync.Map // container name → its pod's unready text

// unreadyMessage is the message of the Ready and ContainersReady
// conditions of a pod none of whose containers is ready. A pod of one
// container (nearly all) shares the text with every pod whose container
// has that name.
func unreadyMessage(pod *corev1.Pod) string {
	if len(pod.Spec.Containers) != 1 {
		return makeUnreadyMessage(pod.Spec.Containers)
	}
	name := pod.Spec.Containers[0].Name
	if m, ok := unreadyMessages.Load(name); ok {
		return m.(string)
	}
	m := makeUnreadyMessage(pod.Spec.Containers)
	unreadyMessages.Store(name, m)
	return m
}

func makeUnreadyMessage(containers []corev1.Container) string {
	names := make([]string, 0, len(containers))
	for _, c := range containers {
		names = append(names, c.Name)
	}
	return fmt.Sprintf("containers with unready status: [%s]", strings.Join(names, " "))
}
