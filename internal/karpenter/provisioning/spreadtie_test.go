package provisioning

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// TestSpreadTieSettledByOtherConstraints: a zone spread with several
// equally empty zones takes the first one the pod's zone affinity allows,
// not simply the first by name (docs/karpenter-provisioning.md#topology).
func TestSpreadTieSettledByOtherConstraints(t *testing.T) {
	zone := corev1.LabelTopologyZone
	for _, tc := range []struct {
		name    string
		dbZone  string
		webZone string // a running web pod already counted by the spread
		want    string // the zone requirement's values, "" for none
	}{
		{"affinity picks among the tied zones", "eu-west-1b", "", "eu-west-1b"},
		{"first tied zone already allowed", "eu-west-1a", "", "eu-west-1a"},
		{"affinity zone not among the tied: no zone left", "eu-west-1b", "eu-west-1b", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{Nodes: map[string]*corev1.Node{}}
			addRunning := func(name, app, z string) {
				c.Nodes["node-"+name] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + name,
					Labels: map[string]string{zone: z, corev1.LabelHostname: "node-" + name}}}
				p := pendingPod(name, "100m", "64Mi")
				p.Labels["app"] = app
				p.Spec.NodeName = "node-" + name
				c.Pods = append(c.Pods, p)
			}
			addRunning("db", "db", tc.dbZone)
			if tc.webZone != "" {
				addRunning("web-old", "web", tc.webZone)
			}
			web := pendingPod("web", "1", "1Gi")
			web.Labels["app"] = "web"
			web.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: zone,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
			web.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: zone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}}}
			top, err := newTopology(c, []*NodePool{pool("default", 0)}, []*corev1.Pod{web}, false)
			if err != nil {
				t.Fatal(err)
			}
			reqs, err := top.addRequirements(web, nil, scheduling.NewRequirements(), scheduling.NewRequirements())
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(reqs.Get(zone).Values(), ","); got != tc.want {
				t.Errorf("zone values = %q, want %q (%v)", got, tc.want, reqs.Get(zone))
			}
		})
	}
}
