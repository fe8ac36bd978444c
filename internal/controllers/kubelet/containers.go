package kubelet

import (
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/version"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Container start-up in virtual time (image pull, create, start) and the
// image names, IDs and sizes the pod status and events show.

// runContainers: images are in, containers are created and started. When
// createContainers ran before (a node whose containers start later than
// they are created), only the start is left.
func runContainers(s *cluster.State, v version.Version, pod *corev1.Pod, node *corev1.Node, pulled time.Duration) {
	started := metav1.NewTime(s.Now)
	created := containersCreated(pod)
	for i, c := range pod.Spec.Containers {
		ref := podRef(pod, c.Name)
		id := pod.Status.ContainerStatuses[i].ContainerID
		if !created {
			recordPulledAndCreated(s, v, pod, node, c, pulled)
			id = newContainerID(s)
		}
		_, startedMsg := containerTexts(v, c.Name)
		s.Record(source, ref, corev1.EventTypeNormal, StartedContainerReason, startedMsg)
		t := true
		pod.Status.ContainerStatuses[i] = corev1.ContainerStatus{
			Name:        c.Name,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
			Image:       normalizeImage(c.Image),
			ImageID:     imageID(c.Image),
			ContainerID: id,
			Started:     &t,
		}
	}
	pod.Status.Phase = corev1.PodRunning
	pod.ResourceVersion = s.Bump()
}

// createContainers records the pulls and the containers' creation; they
// stay waiting, with their container IDs, until runContainers starts them.
func createContainers(s *cluster.State, v version.Version, pod *corev1.Pod, node *corev1.Node, pulled time.Duration) {
	for i, c := range pod.Spec.Containers {
		recordPulledAndCreated(s, v, pod, node, c, pulled)
		pod.Status.ContainerStatuses[i].ContainerID = newContainerID(s)
	}
	pod.ResourceVersion = s.Bump()
}

// containersCreated: createContainers ran and the containers wait to start.
func containersCreated(pod *corev1.Pod) bool {
	return len(pod.Status.ContainerStatuses) > 0 && pod.Status.ContainerStatuses[0].ContainerID != "" &&
		pod.Status.ContainerStatuses[0].State.Waiting != nil
}

func recordPulledAndCreated(s *cluster.State, v version.Version, pod *corev1.Pod, node *corev1.Node, c corev1.Container, pulled time.Duration) {
	ref := podRef(pod, c.Name)
	switch {
	case needsPull(c, node):
		s.Record(source, ref, corev1.EventTypeNormal, PulledImageReason, pullMessage(pulledMessage, c.Image, pulled))
	case v.AtLeast(35, 0):
		s.Record(source, ref, corev1.EventTypeNormal, PulledImageReason, pullMessage(presentMessage, c.Image, 0))
	default:
		s.Record(source, ref, corev1.EventTypeNormal, PulledImageReason, pullMessage(presentOldMessage, c.Image, 0))
	}
	created, _ := containerTexts(v, c.Name)
	s.Record(source, ref, corev1.EventTypeNormal, CreatedContainerReason, created)
}

// containerMessages are the Created and Started texts of the kubelet's
// version: the container name follows a colon from 1.30 (verify the exact
// release), and since 1.35 (kubernetes PR #134043) the name is left out
// because kubectl prints the event's field path before the message.
func containerMessages(v version.Version, name string) (created, started string) {
	switch {
	case v.AtLeast(35, 0):
		return "Created container", "Started container"
	case v.AtLeast(30, 0):
		return "Created container: " + name, "Started container " + name
	default:
		return "Created container " + name, "Started container " + name
	}
}

// pullDelay is the node's pull time when any container must pull its image.
func pullDelay(pod *corev1.Pod, node *corev1.Node, pull time.Duration) time.Duration {
	for _, c := range pod.Spec.Containers {
		if needsPull(c, node) {
			return pull
		}
	}
	return 0
}

// needsPull: Always pulls; IfNotPresent pulls unless the node lists the image.
func needsPull(c corev1.Container, node *corev1.Node) bool {
	if c.ImagePullPolicy == corev1.PullAlways {
		return true
	}
	if c.ImagePullPolicy == corev1.PullNever {
		return false
	}
	if len(node.Status.Images) == 0 {
		return true // nothing to look for (nodes that list no images)
	}
	want := normalizeImage(c.Image)
	for _, img := range node.Status.Images {
		for _, n := range img.Names {
			if n == c.Image || n == want {
				return false
			}
		}
	}
	return true
}

func podRef(pod *corev1.Pod, container string) corev1.ObjectReference {
	ref := cluster.Regarding("Pod", "v1", pod)
	if container != "" {
		ref.FieldPath = containerFieldPath(container)
	}
	return ref
}

// normalizeImage is how containerd reports an image: short Docker Hub names
// gain docker.io/library/ and a missing tag becomes :latest. It is asked for
// every running container on every pass (imagesChanged); a name that grows
// is built once and shared, and a name that is already normal is
// remembered as such, so that it is not parsed again on every pass.
func normalizeImage(image string) string {
	if isNormalImage(image) {
		// Most images (every image of the 100,000-pod file) are normal
		// already: a few byte scans answer without hashing the name into
		// the shared map, on every pass over every running pod.
		return image
	}
	if n, ok := normalizedImages.Load(image); ok {
		return n.(string)
	}
	n := makeNormalizedImage(image)
	normalizedImages.Store(image, n)
	return n
}

var normalizedImages sync.Map // image → its normalized name

func makeNormalizedImage(image string) string {
	name := image
	first, _, hasSlash := strings.Cut(name, "/")
	if !hasSlash {
		name = "docker.io/library/" + name
	} else if !strings.ContainsAny(first, ".:") && first != "localhost" {
		name = "docker.io/" + name
	}
	last := name[strings.LastIndex(name, "/")+1:]
	if !strings.ContainsAny(last, ":@") {
		name += ":latest"
	}
	return name
}

// isNormalImage: makeNormalizedImage(image) is image itself. The name has
// a registry host (a first part with a dot or a colon, or localhost) and its
// last part a tag or a digest (TestIsNormalImageMatchesNormalize).
func isNormalImage(image string) bool {
	slash := strings.IndexByte(image, '/')
	if slash < 0 {
		return false
	}
	first := image[:slash]
	if strings.IndexByte(first, '.') < 0 && strings.IndexByte(first, ':') < 0 && first != "localhost" {
		return false
	}
	last := image[strings.LastIndexByte(image, '/')+1:]
	return strings.IndexByte(last, ':') >= 0 || strings.IndexByte(last, '@') >= 0
}

// makeImageID is imageID's digest reference, made up from the image name.
func makeImageID(image string) string {
	repo := normalizeImage(image)
	if i := strings.LastIndex(repo, "@"); i >= 0 {
		return repo
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	h := fnv.New64a()
	h.Write([]byte(image))
	sum := h.Sum64()
	return fmt.Sprintf("%s@sha256:%016x%016x%016x%016x", repo, sum, sum^0x9e3779b97f4a7c15, sum*31, sum^0xbf58476d1ce4e5b9)
}

// imageSize is a stable made-up size (10–110 MB) for the Pulled event; berth
// has no registry to ask.
func imageSize(image string) int64 {
	h := fnv.New32a()
	h.Write([]byte(image))
	return 10_000_000 + int64(h.Sum32()%100_000_000)
}

func hex64(s *cluster.State) string {
	return string(appendHex64(make([]byte, 0, 64), s))
}

// imagesChanged: a running container's status shows another image than
// its spec (what restartChangedImages acts on).
func imagesChanged(pod *corev1.Pod) bool {
	for i, c := range pod.Spec.Containers {
		if i >= len(pod.Status.ContainerStatuses) {
			break
		}
		cs := &pod.Status.ContainerStatuses[i]
		if cs.Name == c.Name && cs.State.Running != nil && cs.Image != normalizeImage(c.Image) {
			return true
		}
	}
	return false
}

// restartChangedImages is the kubelet noticing that a running container's
// image was changed by a pod update: it restarts that container with the new
// image (restart count up by one, a new container ID). berth models this as
// instantaneous and records no events for it.
func restartChangedImages(s *cluster.State, pod *corev1.Pod) bool {
	if !imagesChanged(pod) {
		return false
	}
	changed := false
	for i, c := range pod.Spec.Containers {
		if i >= len(pod.Status.ContainerStatuses) {
			break
		}
		cs := &pod.Status.ContainerStatuses[i]
		if cs.Name != c.Name || cs.State.Running == nil || cs.Image == normalizeImage(c.Image) {
			continue
		}
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: cs.State.Running.StartedAt,
			FinishedAt: metav1.NewTime(s.Now), ContainerID: cs.ContainerID,
		}}
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(s.Now)}}
		cs.Image, cs.ImageID = normalizeImage(c.Image), imageID(c.Image)
		cs.ContainerID = newContainerID(s)
		cs.RestartCount++
		changed = true
	}
	if changed {
		pod.ResourceVersion = s.Bump()
	}
	return changed
}
