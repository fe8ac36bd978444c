package lifecycle

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/daemonset"
	"github.com/berth-sim/berth/internal/controllers/deployment"
	"github.com/berth-sim/berth/internal/controllers/disruption"
	"github.com/berth-sim/berth/internal/controllers/garbagecollector"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/controllers/replicaset"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/interruption"
	"github.com/berth-sim/berth/internal/sim"
	"github.com/berth-sim/berth/internal/view"
)

// TestScenarios runs the walk-throughs in testdata (see
// controllertest.RunScenarios; the extra directives are below).
// Regenerate with -rewrite and review the diff.
func TestScenarios(t *testing.T) {
	controllertest.RunScenariosWith(t, "testdata", map[string]controllertest.Directive{
		"nodeclaim": createNodeClaim,
		"nodeclaims": func(s *cluster.State, d *datadriven.TestData) (string, error) {
			var b strings.Builder
			err := view.Get(&b, s, view.GetOptions{Args: []string{"nodeclaims"}, Output: outputArg(d)})
			return b.String(), err
		},
		// region names the cluster's AWS region (a ClusterConfig would).
		"region": func(s *cluster.State, d *datadriven.TestData) (string, error) {
			s.Info.Region = strings.TrimSpace(d.CmdArgs[0].Key)
			return "", nil
		},
		"claim":    showClaim,
		"nodeinfo": showNode,
		// interrupt sends EC2's spot interruption warning (berth karpenter interrupt).
		"interrupt": func(s *cluster.State, d *datadriven.TestData) (string, error) {
			n, err := interruption.Notify(s, d.CmdArgs[0].Key)
			if err != nil {
				return "error: " + err.Error() + "\n", nil
			}
			return fmt.Sprintf("notice for %s (node %s, instance %s)\n", n.NodeClaim, n.Node, n.Instance), nil
		},
		// no-capacity TYPE ZONE CAPACITY-TYPE: EC2 has none (berth karpenter unavailable).
		"no-capacity": func(s *cluster.State, d *datadriven.TestData) (string, error) {
			aws := s.Karpenter.AWSState()
			aws.NoCapacity = append(aws.NoCapacity, cluster.NoCapacity{InstanceType: d.CmdArgs[0].Key,
				Zone: d.CmdArgs[1].Key, CapacityType: d.CmdArgs[2].Key})
			return "", nil
		},
		// unavailable prints the persisted unavailable-offerings cache's entries
		// live at the current time.
		"unavailable": func(s *cluster.State, d *datadriven.TestData) (string, error) {
			var b strings.Builder
			if s.Karpenter.AWS != nil {
				for _, e := range s.Karpenter.AWS.Unavailable {
					if s.Now.After(e.Expires) {
						continue
					}
					fmt.Fprintf(&b, "%s %s until %s\n", e.Kind, e.Key, offset(metav1.NewTime(e.Expires)))
				}
			}
			return b.String(), nil
		},
	}, func() []sim.Controller {
		// Each controller has its own catalog here: they agree through the
		// state, as controllers of separate berth commands do.
		return []sim.Controller{garbagecollector.New(), deployment.New(), replicaset.New(), daemonset.New(),
			controllertest.Binder{}, kubelet.New(), disruption.New(), interruption.New(nil), New(nil)}
	})
}

func outputArg(d *datadriven.TestData) string {
	for _, a := range d.CmdArgs {
		if a.Key == "o" && len(a.Vals) == 1 {
			return a.Vals[0]
		}
	}
	return ""
}

// createNodeClaim stores the NodeClaim of the input as the provisioner
// would create it.
func createNodeClaim(s *cluster.State, d *datadriven.TestData) (string, error) {
	nc := &karpv1.NodeClaim{}
	if err := yaml.UnmarshalStrict([]byte(d.Input), nc); err != nil {
		return "", err
	}
	nc.APIVersion, nc.Kind = karpv1.SchemeGroupVersion.String(), "NodeClaim"
	// The provisioner makes the NodePool the claim's owner.
	if np, ok := s.NodePools[nc.Labels[karpv1.Group+"/nodepool"]]; ok {
		yes := true
		nc.OwnerReferences = []metav1.OwnerReference{{APIVersion: karpv1.SchemeGroupVersion.String(), Kind: "NodePool",
			Name: np.Name, UID: np.UID, BlockOwnerDeletion: &yes}}
	}
	nc.UID = types.UID(s.NewUID())
	nc.CreationTimestamp = metav1.NewTime(s.Now)
	nc.Generation = 1
	nc.ResourceVersion = s.Bump()
	s.NoteCreated(nc.UID)
	s.NodeClaims[nc.Name] = nc
	return "nodeclaim/" + nc.Name + " created\n", nil
}

func offset(t metav1.Time) string { return "+" + t.Sub(cluster.Epoch).String() }

func showClaim(s *cluster.State, d *datadriven.TestData) (string, error) {
	name := d.CmdArgs[0].Key
	nc, ok := s.NodeClaims[name]
	if !ok {
		return "nodeclaim " + name + " not found\n", nil
	}
	var b strings.Builder
	writeMap(&b, "label", nc.Labels)
	fmt.Fprintf(&b, "finalizers: %s\n", strings.Join(nc.Finalizers, ","))
	if nc.DeletionTimestamp != nil {
		fmt.Fprintf(&b, "deleting since %s\n", offset(*nc.DeletionTimestamp))
	}
	fmt.Fprintf(&b, "providerID: %s\nimageID: %s\nnodeName: %s\n", nc.Status.ProviderID, nc.Status.ImageID, nc.Status.NodeName)
	fmt.Fprintf(&b, "capacity: %s\nallocatable: %s\n", resources(nc.Status.Capacity), resources(nc.Status.Allocatable))
	for _, c := range nc.Status.Conditions {
		fmt.Fprintf(&b, "condition %s=%s reason=%s since %s", c.Type, c.Status, c.Reason, offset(c.LastTransitionTime))
		if c.Message != "" {
			fmt.Fprintf(&b, " message=%q", c.Message)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

func showNode(s *cluster.State, d *datadriven.TestData) (string, error) {
	name := d.CmdArgs[0].Key
	n, ok := s.Nodes[name]
	if !ok {
		return "node " + name + " not found\n", nil
	}
	var b strings.Builder
	writeMap(&b, "label", n.Labels)
	writeMap(&b, "annotation", n.Annotations)
	for _, t := range n.Spec.Taints {
		fmt.Fprintf(&b, "taint %s=%s:%s\n", t.Key, t.Value, t.Effect)
	}
	fmt.Fprintf(&b, "finalizers: %s\n", strings.Join(n.Finalizers, ","))
	for _, r := range n.OwnerReferences {
		fmt.Fprintf(&b, "owner %s %s/%s\n", r.APIVersion, r.Kind, r.Name)
	}
	if n.DeletionTimestamp != nil {
		fmt.Fprintf(&b, "deleting since %s\n", offset(*n.DeletionTimestamp))
	}
	fmt.Fprintf(&b, "providerID: %s\ncreated: %s\n", n.Spec.ProviderID, offset(n.CreationTimestamp))
	fmt.Fprintf(&b, "allocatable: %s\n", resources(n.Status.Allocatable))
	return b.String(), nil
}

func writeMap(b *strings.Builder, what string, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s %s=%s\n", what, k, m[k])
	}
}

func resources(l corev1.ResourceList) string {
	var parts []string
	for _, name := range sortedNames(l) {
		q := l[name]
		parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
	}
	return strings.Join(parts, " ")
}
