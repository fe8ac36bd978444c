package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/disruption"
	"github.com/berth-sim/berth/internal/sim"
)

// DrainRequest is `berth drain`, with kubectl drain's flags.
type DrainRequest struct {
	Nodes              []string
	IgnoreDaemonSets   bool
	DeleteEmptyDirData bool
	Force              bool
	// Timeout bounds the evictions in virtual time; 0 waits as long as
	// progress is possible.
	Timeout time.Duration
}

// Pod filter texts of kubectl's pkg/drain.
const (
	daemonSetFatal      = "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
	daemonSetWarning    = "ignoring DaemonSet-managed Pods"
	localStorageFatal   = "cannot delete Pods with local storage (use --delete-emptydir-data to override)"
	localStorageWarning = "deleting Pods with local storage"
	unmanagedFatal      = "cannot delete Pods that declare no controller (use --force to override)"
	unmanagedWarning    = "deleting Pods that declare no controller"
)

// podVerdict is what drain's filters decided for one pod.
type podVerdict struct {
	pod     *corev1.Pod
	delete  bool
	warning string
	fatal   string
}

// Drain cordons the nodes, then evicts their pods through the eviction API
// (honouring PodDisruptionBudgets), retrying refused evictions every five
// seconds of virtual time, as kubectl drain does. The cordon and the virtual
// time spent are kept even when the drain fails (exit status 1), with or
// without --timeout, as kubectl drain leaves a node cordoned.
func (a *App) Drain(r DrainRequest) (err error) {
	defer a.finish(&err)
	work := a.change()
	o := &output{}
	if err := cordon(work, r.Nodes, true, o); err != nil {
		return err
	}
	ctrls := a.withProgress(a.controllers(work), 0) // includes the disruption controller evictions depend on
	var fatal []string
	var remaining []string
	for _, name := range r.Nodes {
		errs, err := drainNode(work, ctrls, name, r, o)
		if err != nil {
			return err
		}
		if len(errs) == 0 {
			o.out("node/%s drained", name)
			continue
		}
		o.errf("error: unable to drain node %q due to error: %s, continuing command...", name, aggregateText(errs))
		fatal = append(fatal, errs...)
		remaining = append(remaining, name)
		o.errf("There are pending nodes to be drained:")
		for _, n := range remaining {
			o.errf(" %s", n)
		}
	}
	if err := a.commit(work, o); err != nil {
		return err
	}
	if len(fatal) > 0 {
		return &RawError{Lines: fatal}
	}
	return nil
}

// drainNode evicts the pods of one node and returns the errors that stop
// the drain, one message per line of kubectl's final report.
func drainNode(s *cluster.State, ctrls []sim.Controller, name string, r DrainRequest, o *output) ([]string, error) {
	verdicts := filterPods(s, name, r)
	if errs := groupMessages(verdicts, func(v podVerdict) string { return v.fatal }); len(errs) > 0 {
		return errs, nil
	}
	if warnings := groupMessages(verdicts, func(v podVerdict) string { return v.warning }); len(warnings) > 0 {
		o.errf("Warning: %s", strings.Join(warnings, "; "))
	}
	var pods []*corev1.Pod
	for _, v := range verdicts {
		if v.delete {
			pods = append(pods, v.pod)
		}
	}
	errs, err := evictPods(s, ctrls, pods, r.Timeout, o)
	if err != nil || len(errs) == 0 {
		return nil, err
	}
	pending := filterPods(s, name, r)
	var left []string
	for _, v := range pending {
		if v.delete {
			left = append(left, "pod/"+v.pod.Name)
		}
	}
	if len(left) > 0 {
		o.errf("There are pending pods in node %q when an error occurred: %s", name, aggregateText(errs))
		for _, l := range left {
			o.errf("%s", l)
		}
	}
	return []string{aggregateText(errs)}, nil
}

// filterPods runs kubectl drain's filters over the pods bound to the node,
// in the API's list order: deleted pods are skipped, DaemonSet pods stop
// the drain unless ignored, emptyDir pods need --delete-emptydir-data and
// pods without a controller need --force.
func filterPods(s *cluster.State, node string, r DrainRequest) []podVerdict {
	var out []podVerdict
	for _, k := range cluster.SortedKeys(s.Pods) {
		pod := s.Pods[k]
		if pod.Spec.NodeName != node || pod.DeletionTimestamp != nil {
			continue
		}
		out = append(out, verdict(s, pod, r))
	}
	return out
}

func verdict(s *cluster.State, pod *corev1.Pod, r DrainRequest) podVerdict {
	v := podVerdict{pod: pod, delete: true}
	ref := metav1.GetControllerOf(pod)
	if ref != nil && ref.Kind == "DaemonSet" {
		if _, ok := s.DaemonSets[cluster.Key(pod.Namespace, ref.Name)]; !ok {
			msg := fmt.Sprintf("daemonsets.apps %q not found", ref.Name)
			if r.Force {
				return podVerdict{pod: pod, delete: true, warning: msg}
			}
			return podVerdict{pod: pod, fatal: msg}
		}
		if !r.IgnoreDaemonSets {
			return podVerdict{pod: pod, fatal: daemonSetFatal}
		}
		return podVerdict{pod: pod, warning: daemonSetWarning}
	}
	if cluster.IsTerminal(pod) {
		return v
	}
	if hasLocalStorage(pod) {
		if !r.DeleteEmptyDirData {
			return podVerdict{pod: pod, fatal: localStorageFatal}
		}
		v.warning = localStorageWarning
	}
	if ref == nil {
		if !r.Force {
			return podVerdict{pod: pod, fatal: unmanagedFatal}
		}
		v.warning = unmanagedWarning
	}
	return v
}

func hasLocalStorage(pod *corev1.Pod) bool {
	for _, vol := range pod.Spec.Volumes {
		if vol.EmptyDir != nil {
			return true
		}
	}
	return false
}

// groupMessages is PodDeleteList's errors()/Warnings(): pods grouped by
// message, "<message>: ns/a, ns/b", messages in sorted order.
func groupMessages(verdicts []podVerdict, msg func(podVerdict) string) []string {
	byMsg := map[string][]string{}
	for _, v := range verdicts {
		if m := msg(v); m != "" {
			byMsg[m] = append(byMsg[m], v.pod.Namespace+"/"+v.pod.Name)
		}
	}
	var out []string
	for _, m := range cluster.SortedKeys(byMsg) {
		out = append(out, m+": "+strings.Join(byMsg[m], ", "))
	}
	return out
}

// evictPods is kubectl's evictPods in virtual time: every pod is evicted at
// once; a refused eviction (429, a disruption budget) is retried after
// five seconds while the cluster moves on; an evicted pod is waited for
// until it is gone (its grace period on a live node), and only then
// reported evicted; the global timeout ends it.
func evictPods(s *cluster.State, ctrls []sim.Controller, pods []*corev1.Pod, timeout time.Duration, o *output) ([]string, error) {
	start := s.Now
	pending := pods
	var waiting []*corev1.Pod
	var errs []string
	for len(pending) > 0 || len(waiting) > 0 {
		var retry []*corev1.Pod
		for _, pod := range pending {
			o.out("evicting pod %s/%s", pod.Namespace, pod.Name)
			if timeout > 0 && s.Now.Sub(start) >= timeout {
				errs = append(errs, fmt.Sprintf("error when evicting pods/%q -n %q: global timeout reached: %v", pod.Name, pod.Namespace, timeout))
				continue
			}
			live, ok := s.Pods[cluster.Key(pod.Namespace, pod.Name)]
			if !ok || live.UID != pod.UID {
				continue // already gone: nothing to wait for
			}
			err := disruption.Evict(s, live)
			var ee *disruption.EvictionError
			switch {
			case err == nil:
				waiting = append(waiting, pod)
			case errors.As(err, &ee) && ee.Retryable():
				o.errf("error when evicting pods/%q -n %q (will retry after %v): %v", pod.Name, pod.Namespace, evictRetryDelay, err)
				retry = append(retry, pod)
			default:
				errs = append(errs, fmt.Sprintf("error when evicting pods/%q -n %q: %v", pod.Name, pod.Namespace, err))
			}
		}
		if err := sim.RunNow(s, ctrls); err != nil {
			return nil, err
		}
		waiting = reportGone(s, waiting, o)
		pending = retry
		if len(pending) == 0 && len(waiting) == 0 {
			break
		}
		if timeout > 0 && len(pending) == 0 && s.Now.Sub(start) >= timeout {
			// waitForDelete shares the global timeout's context.
			for _, pod := range waiting {
				errs = append(errs, fmt.Sprintf("error when waiting for pod %q in namespace %q to terminate: %v", pod.Name, pod.Namespace, context.DeadlineExceeded))
			}
			break
		}
		if timeout == 0 && !progressPossible(s) {
			// kubectl would retry (or wait) forever; berth stops here and
			// fails the way a --timeout does: the node stays cordoned, the
			// virtual time spent is kept, and each pod left gets an error
			// line.
			for _, pod := range pending {
				errs = append(errs, fmt.Sprintf("error when evicting pods/%q -n %q: %v (kubectl would retry forever; add --timeout to bound the wait)", pod.Name, pod.Namespace, errNoProgress))
			}
			for _, pod := range waiting {
				errs = append(errs, fmt.Sprintf("error when waiting for pod %q in namespace %q to terminate: %v (kubectl would wait forever; add --timeout to bound the wait)", pod.Name, pod.Namespace, errNoProgress))
			}
			break
		}
		step := evictRetryDelay
		if len(pending) == 0 {
			// Only deletions to wait for: kubectl polls every second; the
			// pods go at timers, so jump to the next one.
			step = time.Second
			if next, ok := s.NextTimer(true); ok && next.After(s.Now) {
				step = next.Sub(s.Now)
			}
			if timeout > 0 && s.Now.Add(step).After(start.Add(timeout)) {
				step = start.Add(timeout).Sub(s.Now)
			}
		}
		if err := sim.Advance(s, ctrls, step); err != nil {
			return nil, err
		}
		waiting = reportGone(s, waiting, o)
	}
	return errs, nil
}

// reportGone prints kubectl's "pod/NAME evicted" for each waited-for pod
// that no longer exists (or was replaced by a namesake) and returns the
// others.
func reportGone(s *cluster.State, waiting []*corev1.Pod, o *output) []*corev1.Pod {
	var left []*corev1.Pod
	for _, pod := range waiting {
		if live, ok := s.Pods[cluster.Key(pod.Namespace, pod.Name)]; ok && live.UID == pod.UID {
			left = append(left, pod)
			continue
		}
		o.out("pod/%s evicted", pod.Name)
	}
	return left
}

// progressPossible reports whether virtual time still holds work that could
// change a disruption budget: a pod starting, a node arriving.
func progressPossible(s *cluster.State) bool {
	_, ok := s.NextTimer(true)
	return ok
}
