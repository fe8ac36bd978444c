package controller

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/internal/autoscaler/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
)

// The status ConfigMap's document, field for field as cluster-autoscaler
// (release-1.36) serializes it: through JSON, so keys come out sorted,
// zero candidates and beingDeleted are left out, and every condition
// carries its probe and transition times
// (docs/cluster-autoscaler.md#status-configmap).
type (
	caStatus struct {
		Time             string          `json:"time,omitempty"`
		AutoscalerStatus string          `json:"autoscalerStatus,omitempty"`
		Message          string          `json:"message,omitempty"`
		ClusterWide      caClusterWide   `json:"clusterWide,omitempty"`
		NodeGroups       []caGroupStatus `json:"nodeGroups,omitempty"`
	}
	caClusterWide struct {
		Health    caHealth    `json:"health,omitempty"`
		ScaleUp   caScaleUp   `json:"scaleUp,omitempty"`
		ScaleDown caScaleDown `json:"scaleDown,omitempty"`
	}
	caGroupStatus struct {
		Name      string        `json:"name,omitempty"`
		Health    caGroupHealth `json:"health,omitempty"`
		ScaleUp   caScaleUp     `json:"scaleUp,omitempty"`
		ScaleDown caScaleDown   `json:"scaleDown,omitempty"`
	}
	caHealth struct {
		Status             string      `json:"status,omitempty"`
		NodeCounts         caCounts    `json:"nodeCounts,omitempty"`
		LastProbeTime      metav1.Time `json:"lastProbeTime,omitempty"`
		LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	}
	caGroupHealth struct {
		Status              string      `json:"status,omitempty"`
		NodeCounts          caCounts    `json:"nodeCounts,omitempty"`
		CloudProviderTarget int         `json:"cloudProviderTarget"`
		MinSize             int         `json:"minSize"`
		MaxSize             int         `json:"maxSize"`
		LastProbeTime       metav1.Time `json:"lastProbeTime,omitempty"`
		LastTransitionTime  metav1.Time `json:"lastTransitionTime,omitempty"`
	}
	caCounts struct {
		Registered       caRegistered `json:"registered,omitempty"`
		LongUnregistered int          `json:"longUnregistered"`
		Unregistered     int          `json:"unregistered"`
	}
	caRegistered struct {
		Total        int       `json:"total"`
		Ready        int       `json:"ready"`
		NotStarted   int       `json:"notStarted"`
		Suspended    int       `json:"suspended"`
		BeingDeleted int       `json:"beingDeleted,omitempty"`
		Unready      caUnready `json:"unready,omitempty"`
	}
	caUnready struct {
		Total           int `json:"total"`
		ResourceUnready int `json:"resourceUnready"`
	}
	caScaleUp struct {
		Status             string      `json:"status,omitempty"`
		BackoffInfo        *caBackoff  `json:"backoffInfo,omitempty"`
		LastProbeTime      metav1.Time `json:"lastProbeTime,omitempty"`
		LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	}
	caBackoff struct {
		ErrorCode    string `json:"errorCode,omitempty"`
		ErrorMessage string `json:"errorMessage,omitempty"`
	}
	caScaleDown struct {
		Status             string      `json:"status,omitempty"`
		Candidates         int         `json:"candidates,omitempty"`
		LastProbeTime      metav1.Time `json:"lastProbeTime,omitempty"`
		LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	}
)

// Condition statuses of the status ConfigMap.
const (
	StatusHealthy           = "Healthy"
	StatusUnhealthy         = "Unhealthy"
	StatusInProgress        = "InProgress"
	StatusNoActivity        = "NoActivity"
	StatusBackoff           = "Backoff"
	StatusCandidatesPresent = "CandidatesPresent"
	StatusNoCandidates      = "NoCandidates"
)

// maxErrorMessageSize is where cluster-autoscaler cuts a backoff's message.
const maxErrorMessageSize = 500

// readiness counts nodes as cluster-autoscaler's cluster state does.
type readiness struct {
	registered, ready, notStarted, unready int
	unregistered, longUnregistered         int
}

// maxNodeStartupTime is how long a registered node that is not Ready yet
// counts as not started rather than unready.
const maxNodeStartupTime = 15 * time.Minute

func (r *readiness) addNode(now time.Time, n *corev1.Node) {
	r.registered++
	switch {
	case isReady(n):
		r.ready++
	case n.CreationTimestamp.Add(maxNodeStartupTime).After(now):
		r.notStarted++
	default:
		r.unready++
	}
}

func (r readiness) counts() caCounts {
	return caCounts{
		Registered: caRegistered{Total: r.registered, Ready: r.ready, NotStarted: r.notStarted,
			Unready: caUnready{Total: r.unready}},
		LongUnregistered: r.longUnregistered, Unregistered: r.unregistered,
	}
}

// groupReadiness counts the group's nodes and its instances without one.
func (l *loop) groupReadiness(g nodegroups.Group) (readiness, bool) {
	var r readiness
	found := false
	for _, n := range g.Nodes(l.s) {
		r.addNode(l.s.Now, n)
		found = true
	}
	for _, inst := range l.s.Autoscaler.Launching {
		if inst.NodeGroup != g.NodeGroup {
			continue
		}
		found = true
		if l.longUnregistered(inst) {
			r.longUnregistered++
		} else {
			r.unregistered++
		}
	}
	return r, found
}

// clusterReadiness counts every node of the cluster (cluster-autoscaler
// sees them all, whichever group they belong to) and the managed groups'
// instances without a node.
func (l *loop) clusterReadiness() readiness {
	var r readiness
	for _, k := range cluster.SortedKeys(l.s.Nodes) {
		r.addNode(l.s.Now, l.s.Nodes[k])
	}
	for _, g := range l.groups {
		gr, _ := l.groupReadiness(g)
		r.unregistered += gr.unregistered
		r.longUnregistered += gr.longUnregistered
	}
	return r
}

// clusterHealthy is cluster-autoscaler's check: more unready nodes than
// --ok-total-unready-count and than --max-total-unready-percentage of all
// nodes make the cluster unhealthy.
func (l *loop) clusterHealthy() bool {
	r := l.clusterReadiness()
	return !(r.unready > l.opts.OkTotalUnreadyCount &&
		float64(r.unready) > l.opts.MaxTotalUnreadyPercentage/100*float64(len(l.s.Nodes)))
}

// groupHealthy is the same check for one group: the nodes missing below
// the size it should have (the target less the scale-up in progress).
func (l *loop) groupHealthy(g nodegroups.Group, r readiness, found bool) bool {
	target := l.ngOf(g).DesiredSize
	minNodes := target
	if req, ok := l.s.Autoscaler.ScaleUpRequests[g.Name]; ok {
		minNodes -= req.Increase
	}
	if !found {
		return target == 0 || (minNodes == 0 && target > 0)
	}
	missing := 0
	if r.ready < minNodes {
		missing = minNodes - r.ready
	}
	return !(missing > l.opts.OkTotalUnreadyCount &&
		float64(missing) > l.opts.MaxTotalUnreadyPercentage/100*float64(r.ready+r.unready+r.notStarted))
}

// scalingUp is cluster-autoscaler's IsNodeGroupScalingUp: a scale-up
// request with instances still to come.
func (l *loop) scalingUp(g nodegroups.Group) bool {
	_, ok := l.s.Autoscaler.ScaleUpRequests[g.Name]
	return ok && l.upcoming(g.NodeGroup) > 0
}

// writeStatus writes the "status" key (docs/cluster-autoscaler.md#status-configmap).
func writeStatus(l *loop) {
	s := l.s
	cm := statusConfigMap(s)
	now := s.Now.UTC().Format("2006-01-02 15:04:05.999999999 -0700 MST")
	probe := metav1.NewTime(s.Now.UTC())
	prev := map[string]cluster.ConditionSince{}
	if s.Autoscaler.Status != nil {
		prev = s.Autoscaler.Status.Conditions
	}
	next := map[string]cluster.ConditionSince{}
	since := func(key, status string) metav1.Time {
		c, ok := prev[key]
		if !ok || c.Status != status {
			c = cluster.ConditionSince{Status: status, Since: s.Now.UTC()}
		}
		next[key] = c
		return metav1.NewTime(c.Since)
	}
	st := caStatus{Time: now, AutoscalerStatus: "Running"}
	anyInProgress := false
	totalCandidates := 0
	for _, g := range l.groups {
		r, found := l.groupReadiness(g)
		ng := l.ngOf(g)
		gs := caGroupStatus{Name: g.Name}
		healthy := l.groupHealthy(g, r, found)
		h := StatusHealthy
		if !healthy {
			h = StatusUnhealthy
		}
		gs.Health = caGroupHealth{Status: h, NodeCounts: r.counts(), CloudProviderTarget: ng.DesiredSize,
			MinSize: g.MinSize, MaxSize: g.MaxSize, LastProbeTime: probe, LastTransitionTime: since(g.Name+"/health", h)}
		up := caScaleUp{LastProbeTime: probe}
		b, backed := backedOff(s, g.Name)
		switch {
		case l.scalingUp(g):
			up.Status = StatusInProgress
			anyInProgress = true
		case !healthy:
			up.Status = StatusUnhealthy
		case backed:
			up.Status = StatusBackoff
			msg := b.ErrorMessage
			if len(msg) > maxErrorMessageSize {
				msg = msg[:maxErrorMessageSize]
			}
			up.BackoffInfo = &caBackoff{ErrorCode: b.ErrorCode, ErrorMessage: msg}
		default:
			up.Status = StatusNoActivity
		}
		up.LastTransitionTime = since(g.Name+"/scaleUp", up.Status)
		gs.ScaleUp = up
		n := 0
		for _, node := range g.Nodes(s) {
			if _, ok := s.Autoscaler.Unneeded[node.Name]; ok {
				n++
			}
		}
		totalCandidates += n
		gs.ScaleDown = scaleDownCondition(n, probe, since(g.Name+"/scaleDown", candidatesStatus(n)))
		st.NodeGroups = append(st.NodeGroups, gs)
	}
	cr := l.clusterReadiness()
	h := StatusHealthy
	if !l.clusterHealthy() {
		h = StatusUnhealthy
	}
	st.ClusterWide.Health = caHealth{Status: h, NodeCounts: cr.counts(), LastProbeTime: probe,
		LastTransitionTime: since("clusterWide/health", h)}
	up := StatusNoActivity
	if anyInProgress {
		up = StatusInProgress
	}
	st.ClusterWide.ScaleUp = caScaleUp{Status: up, LastProbeTime: probe, LastTransitionTime: since("clusterWide/scaleUp", up)}
	st.ClusterWide.ScaleDown = scaleDownCondition(totalCandidates, probe,
		since("clusterWide/scaleDown", candidatesStatus(totalCandidates)))
	s.Autoscaler.Status = &cluster.AutoscalerStatus{Conditions: next}

	out, err := yaml.Marshal(st)
	if err != nil {
		// The document is plain data; marshalling it cannot fail.
		panic(err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if cm.Data["status"] == string(out) {
		return
	}
	cm.Data["status"] = string(out)
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations["cluster-autoscaler.kubernetes.io/last-updated"] = now
	cm.ResourceVersion = s.Bump()
}

func candidatesStatus(n int) string {
	if n > 0 {
		return StatusCandidatesPresent
	}
	return StatusNoCandidates
}

func scaleDownCondition(n int, probe, since metav1.Time) caScaleDown {
	return caScaleDown{Status: candidatesStatus(n), Candidates: n, LastProbeTime: probe, LastTransitionTime: since}
}

func isReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
