package view

import (
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/cluster"
)

// RolloutTimeoutMessage is what kubectl prints when --timeout expires
// (apimachinery's ErrWaitTimeout); the command then exits 1.
const RolloutTimeoutMessage = "error: timed out waiting for the condition"

// statusViewer is kubectl's StatusViewer: the message for the object as it
// is now, whether the rollout is done, or an error that ends the wait.
type statusViewer func(obj runtime.Object) (msg string, done bool, err error)

// RolloutStatus prints one `kubectl rollout status` message for ref
// ("deployment/ui", "deploy/ui") as the state is now and reports whether
// the rollout is complete. The caller drives --watch by advancing virtual
// time and calling again, and prints RolloutTimeoutMessage (exit 1) when
// timeout of virtual time passes first; watch and timeout are accepted here
// so callers pass kubectl's flags through unchanged.
func RolloutStatus(w io.Writer, s *cluster.State, ref, namespace string, watch bool, timeout time.Duration) (bool, error) {
	_, _ = watch, timeout
	if namespace == "" {
		namespace = "default"
	}
	typ, name, ok := strings.Cut(ref, "/")
	if !ok || name == "" {
		return false, fmt.Errorf("error: you must provide a resource and a resource name together")
	}
	r, err := resolveKind(typ)
	if err != nil {
		return false, err
	}
	viewer := printerFor(r).status
	if viewer == nil {
		return false, fmt.Errorf("error: no status viewer has been implemented for %s", r.GVK.Kind)
	}
	obj, found := lookup(s, r, namespace, name)
	if !found {
		return false, notFound(r, name)
	}
	msg, done, err := viewer(obj)
	if err != nil {
		return false, err
	}
	fmt.Fprint(w, msg)
	return done, nil
}

// deploymentStatus follows DeploymentStatusViewer.Status in its order of checks.
func deploymentStatus(obj runtime.Object) (string, bool, error) {
	d := obj.(*appsv1.Deployment)
	if d.Generation > d.Status.ObservedGeneration {
		return "Waiting for deployment spec update to be observed...\n", false, nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return "", false, fmt.Errorf("error: deployment %q exceeded its progress deadline", d.Name)
		}
	}
	want := int32(replicas(d.Spec.Replicas))
	st := d.Status
	switch {
	case st.UpdatedReplicas < want:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...\n", d.Name, st.UpdatedReplicas, want), false, nil
	case st.Replicas > st.UpdatedReplicas:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...\n", d.Name, st.Replicas-st.UpdatedReplicas), false, nil
	case st.AvailableReplicas < st.UpdatedReplicas:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...\n", d.Name, st.AvailableReplicas, st.UpdatedReplicas), false, nil
	}
	return fmt.Sprintf("deployment %q successfully rolled out\n", d.Name), true, nil
}
