package kubelet

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// The pod conditions the kubelet owns, in its order.

// startConditions sets the conditions of a pod the kubelet starts. A pod
// whose only condition is the scheduler's PodScheduled (every pod the
// scheduler bound) gets its five conditions in one slice, in the kubelet's
// order; any other goes through setConditions, which gives the same result
// (TestStartConditionsMatchSetConditions).
func startConditions(pod *corev1.Pod, now time.Time, unready string) {
	if c := pod.Status.Conditions; len(c) == 1 && c[0].Type == corev1.PodScheduled {
		t := metav1.NewTime(now)
		scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t}
		if c[0].Status == corev1.ConditionTrue {
			scheduled.LastTransitionTime = c[0].LastTransitionTime
		}
		pod.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse, LastTransitionTime: t},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: unready, LastTransitionTime: t},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: unready, LastTransitionTime: t},
			scheduled,
		}
		return
	}
	setConditions(pod, now,
		corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse},
		corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
		corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: unready},
		corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: unready},
		corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
	)
}

// setConditions upserts kubelet-owned conditions, keeping the transition time
// of a condition whose status does not change, in the kubelet's order.
func setConditions(pod *corev1.Pod, now time.Time, conds ...corev1.PodCondition) {
	// Grow the list once, to its final length: at 100,000 pods the
	// doubling appends left a fifth of each pod's status unused.
	missing := 0
	for _, c := range conds {
		if controllerutil.GetPodCondition(&pod.Status, c.Type) == nil {
			missing++
		}
	}
	if n := len(pod.Status.Conditions); missing > cap(pod.Status.Conditions)-n {
		pod.Status.Conditions = append(make([]corev1.PodCondition, 0, n+missing), pod.Status.Conditions...)
	}
	for _, c := range conds {
		old := controllerutil.GetPodCondition(&pod.Status, c.Type)
		if old != nil && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		} else {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		if old != nil {
			*old = c
		} else {
			pod.Status.Conditions = append(pod.Status.Conditions, c)
		}
	}
	if !inKubeletOrder(pod.Status.Conditions) {
		slices.SortStableFunc(pod.Status.Conditions, func(a, b corev1.PodCondition) int {
			return cmp.Compare(conditionRank(a.Type), conditionRank(b.Type))
		})
	}
}

// inKubeletOrder: the conditions are in the kubelet's order already, as
// they are whenever setConditions only updates conditions startConditions
// set (the sandbox ready, the pod ready), so a stable sort would leave
// them as they are. Checking is cheaper than the sort, whose comparisons
// copy two conditions each (TestSetConditionsOrder).
func inKubeletOrder(conds []corev1.PodCondition) bool {
	for i := 1; i < len(conds); i++ {
		if conditionRank(conds[i-1].Type) > conditionRank(conds[i].Type) {
			return false
		}
	}
	return true
}

// conditionRank is the kubelet's order of its conditions; others go last.
func conditionRank(t corev1.PodConditionType) int {
	switch t {
	case corev1.PodReadyToStartContainers:
		return 0
	case corev1.PodInitialized:
		return 1
	case corev1.PodReady:
		return 2
	case corev1.ContainersReady:
		return 3
	case corev1.PodScheduled:
		return 4
	}
	return 5
}
