package endpointslice

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
)

type podOpt func(*corev1.Pod)

func ready(p *corev1.Pod) {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
}
func terminating(p *corev1.Pod) { t := metav1.Now(); p.DeletionTimestamp = &t }
func noIP(p *corev1.Pod)        { p.Status.PodIP, p.Status.PodIPs = "", nil }
func succeeded(p *corev1.Pod)   { p.Status.Phase = corev1.PodSucceeded }
func onNode(n string) podOpt    { return func(p *corev1.Pod) { p.Spec.NodeName = n } }
func labelled(k, v string) podOpt {
	return func(p *corev1.Pod) { p.Labels = map[string]string{k: v} }
}

// fixture is namespace shop with node n1 in us-west-2a, a Service web
// (selector app=web, port http 80 -> named targetPort "http") and pods
// web-0.. with container port http 8080.
func fixture(t *testing.T, svc func(*corev1.Service), pods ...[]podOpt) *cluster.State {
	t.Helper()
	s := controllertest.NewState("shop")
	controllertest.AddNode(s, "n1", "4", "8Gi", map[string]string{corev1.LabelTopologyZone: "us-west-2a"})
	service := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")}}}}
	if svc != nil {
		svc(service)
	}
	if err := admission.Create(s, service); err != nil {
		t.Fatal(err)
	}
	for i, opts := range pods {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "shop", UID: types.UID(fmt.Sprint("uid-", i)),
				Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.1.%d.%d", i/200, i%200+1)},
		}
		for _, o := range opts {
			o(p)
		}
		s.Pods[cluster.Key(p.Namespace, p.Name)] = p
	}
	return s
}

func slicesOf(s *cluster.State, svc string) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, k := range cluster.SortedKeys(s.EndpointSlices) {
		if sl := s.EndpointSlices[k]; sl.Labels[discoveryv1.LabelServiceName] == svc {
			out = append(out, sl)
		}
	}
	return out
}

// conds renders an endpoint as "ip ready/serving/terminating node zone".
func conds(ep discoveryv1.Endpoint) string {
	b := func(p *bool) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	return fmt.Sprintf("%s %s/%s/%s %s %s", strings.Join(ep.Addresses, ","), b(ep.Conditions.Ready), b(ep.Conditions.Serving),
		b(ep.Conditions.Terminating), str(ep.NodeName), str(ep.Zone))
}

func TestServiceSlices(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  func(*corev1.Service)
		pods [][]podOpt
		// want is one line per endpoint, "|" between slices; ports are
		// the first slice's.
		want  string
		ports string
	}{
		{name: "ready pod, named target port resolved", pods: [][]podOpt{{ready}},
			want: "10.1.0.1 true/true/false n1 us-west-2a", ports: "http:8080/TCP"},
		{name: "not ready", pods: [][]podOpt{{}},
			want: "10.1.0.1 false/false/false n1 us-west-2a", ports: "http:8080/TCP"},
		{name: "terminating Ready pod serves but is not ready", pods: [][]podOpt{{ready, terminating}},
			want: "10.1.0.1 false/true/true n1 us-west-2a", ports: "http:8080/TCP"},
		{name: "publishNotReadyAddresses", svc: func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true },
			pods: [][]podOpt{{terminating}}, want: "10.1.0.1 true/false/true n1 us-west-2a", ports: "http:8080/TCP"},
		{name: "pods without IP, finished, on a missing node or unselected are left out: placeholder",
			pods: [][]podOpt{{ready, noIP}, {ready, succeeded}, {ready, onNode("gone")}, {ready, labelled("app", "other")}},
			want: "", ports: ""},
		{name: "numeric target port", svc: func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromInt32(9090) },
			pods: [][]podOpt{{ready}}, want: "10.1.0.1 true/true/false n1 us-west-2a", ports: "http:9090/TCP"},
		{name: "unresolvable named port: endpoint without ports", svc: func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("grpc") },
			pods: [][]podOpt{{ready}}, want: "10.1.0.1 true/true/false n1 us-west-2a", ports: ""},
		{name: "no selector: no slices", svc: func(s *corev1.Service) { s.Spec.Selector = nil }, pods: [][]podOpt{{ready}}, want: "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fixture(t, tc.svc, tc.pods...)
			if _, err := New().Sync(s); err != nil {
				t.Fatal(err)
			}
			slices := slicesOf(s, "web")
			if tc.want == "none" {
				if len(slices) != 0 {
					t.Fatalf("got %d slices, want none", len(slices))
				}
				return
			}
			if len(slices) != 1 {
				t.Fatalf("got %d slices, want 1", len(slices))
			}
			sl := slices[0]
			var eps []string
			for _, ep := range sl.Endpoints {
				eps = append(eps, conds(ep))
			}
			if got := strings.Join(eps, "|"); got != tc.want {
				t.Errorf("endpoints = %q, want %q", got, tc.want)
			}
			var ports []string
			for _, p := range sl.Ports {
				ports = append(ports, fmt.Sprintf("%s:%d/%s", *p.Name, *p.Port, *p.Protocol))
			}
			if got := strings.Join(ports, ","); got != tc.ports {
				t.Errorf("ports = %q, want %q", got, tc.ports)
			}
			if !regexp.MustCompile(`^web-[bcdfghjklmnpqrstvwxz2456789]{5}$`).MatchString(sl.Name) {
				t.Errorf("name %q is not web-<5 characters>", sl.Name)
			}
			want := map[string]string{"team": "a", discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: ManagedBy}
			if fmt.Sprint(sl.Labels) != fmt.Sprint(want) {
				t.Errorf("labels = %v, want %v", sl.Labels, want)
			}
			if ref := sl.OwnerReferences; len(ref) != 1 || ref[0].Kind != "Service" || ref[0].Name != "web" || ref[0].Controller == nil || !*ref[0].Controller {
				t.Errorf("owner = %+v", ref)
			}
		})
	}
}

func TestSlicesHoldAtMostOneHundredEndpoints(t *testing.T) {
	pods := make([][]podOpt, 150)
	for i := range pods {
		pods[i] = []podOpt{ready}
	}
	s := fixture(t, nil, pods...)
	c := New()
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	slices := slicesOf(s, "web")
	if len(slices) != 2 || len(slices[0].Endpoints)+len(slices[1].Endpoints) != 150 ||
		max(len(slices[0].Endpoints), len(slices[1].Endpoints)) != MaxEndpointsPerSlice {
		t.Fatalf("got %d slices", len(slices))
	}
	names := slices[0].Name + "," + slices[1].Name
	// A second pass over an unchanged state writes nothing.
	if changed, _ := c.Sync(s); changed {
		t.Error("second Sync changed the state")
	}
	if changed, _ := New().Sync(s); changed {
		t.Error("a fresh controller rewrote unchanged slices")
	}
	// A pod going away leaves its slice; names stay.
	delete(s.Pods, "shop/web-7")
	s.Bump()
	if changed, _ := c.Sync(s); !changed {
		t.Fatal("removing a pod changed nothing")
	}
	slices = slicesOf(s, "web")
	if got := slices[0].Name + "," + slices[1].Name; got != names || len(slices[0].Endpoints)+len(slices[1].Endpoints) != 149 {
		t.Errorf("after removal: %s with %d+%d endpoints, want %s", got, len(slices[0].Endpoints), len(slices[1].Endpoints), names)
	}
	// The same state gives the same names.
	again := fixture(t, nil, pods...)
	_, _ = New().Sync(again)
	if got := slicesOf(again, "web"); got[0].Name+","+got[1].Name != names {
		t.Errorf("names not deterministic: %s vs %s", got[0].Name+","+got[1].Name, names)
	}
}

func TestPlaceholderTurnsIntoTheSlice(t *testing.T) {
	s := fixture(t, nil, []podOpt{noIP})
	c := New()
	_, _ = c.Sync(s)
	slices := slicesOf(s, "web")
	if len(slices) != 1 || len(slices[0].Endpoints) != 0 || len(slices[0].Ports) != 0 {
		t.Fatalf("want one empty placeholder, got %d", len(slices))
	}
	name := slices[0].Name
	s.Pods["shop/web-0"].Status.PodIP = "10.1.0.1"
	ready(s.Pods["shop/web-0"])
	s.Pods["shop/web-0"].ResourceVersion = s.Bump() // a write moves the object's version
	_, _ = c.Sync(s)
	slices = slicesOf(s, "web")
	if len(slices) != 1 || slices[0].Name != name || len(slices[0].Endpoints) != 1 || len(slices[0].Ports) != 1 {
		t.Fatalf("placeholder %s not reused: %d slices", name, len(slices))
	}
	if slices[0].Generation != 2 {
		t.Errorf("generation = %d, want 2", slices[0].Generation)
	}
}

func TestKubernetesServiceEndpoints(t *testing.T) {
	s := controllertest.NewState()
	s.Info = cluster.Info{Name: "c", Region: "us-west-2", KubernetesVersion: s.Info.KubernetesVersion, VPCCIDR: "10.42.0.0/16"}
	_, _ = New().Sync(s)
	ep := s.Endpoints["default/kubernetes"]
	sl := s.EndpointSlices["default/kubernetes"]
	if ep == nil || sl == nil {
		t.Fatal("no kubernetes Endpoints or EndpointSlice")
	}
	if ep.Labels[discoveryv1.LabelSkipMirror] != "true" || len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != ControlPlaneENIs {
		t.Fatalf("endpoints = %+v", ep)
	}
	zones := aws.ClusterZones(s.Info)
	for i, a := range ep.Subsets[0].Addresses {
		cidr, _ := aws.PrivateSubnet(s.Info, zones[i])
		if !netip.MustParsePrefix(cidr).Contains(netip.MustParseAddr(a.IP)) {
			t.Errorf("address %s not in %s's private subnet %s", a.IP, zones[i], cidr)
		}
		if !aws.UsedIPs(s)[a.IP] {
			t.Errorf("address %s not reserved against node and pod allocation", a.IP)
		}
	}
	if p := ep.Subsets[0].Ports; len(p) != 1 || p[0].Name != "https" || p[0].Port != 443 {
		t.Errorf("ports = %+v", p)
	}
	if fmt.Sprint(sl.Labels) != fmt.Sprint(map[string]string{discoveryv1.LabelServiceName: "kubernetes"}) || len(sl.OwnerReferences) != 0 {
		t.Errorf("slice metadata = %v %v", sl.Labels, sl.OwnerReferences)
	}
	if len(sl.Endpoints) != 2 || *sl.Endpoints[0].Conditions.Ready != true || sl.Endpoints[0].Conditions.Serving != nil ||
		sl.Endpoints[0].Addresses[0] != ep.Subsets[0].Addresses[0].IP {
		t.Errorf("slice endpoints = %+v", sl.Endpoints)
	}
	// The control plane's addresses follow the seed alone.
	other := controllertest.NewState()
	other.Info = s.Info
	_, _ = New().Sync(other)
	if fmt.Sprint(other.Endpoints["default/kubernetes"].Subsets) != fmt.Sprint(ep.Subsets) {
		t.Error("control plane addresses differ for the same seed")
	}
	// Without a cluster VPC (a state of plain Node manifests) there are no
	// control plane addresses to show.
	bare := controllertest.NewState()
	_, _ = New().Sync(bare)
	if len(bare.Endpoints) != 0 {
		t.Error("endpoints without a VPC")
	}
}

func TestLegacyEndpoints(t *testing.T) {
	s := fixture(t, nil, []podOpt{ready}, []podOpt{}, []podOpt{ready, terminating}, []podOpt{ready, labelled("app", "other")})
	s.Pods["shop/web-1"].Status.PodIP = "10.1.0.0" // sorts before web-0's address
	c := New()
	_, _ = c.Sync(s)
	ep := s.Endpoints["shop/web"]
	if ep == nil || len(ep.Subsets) != 1 {
		t.Fatalf("endpoints = %+v", ep)
	}
	ss := ep.Subsets[0]
	ips := func(a []corev1.EndpointAddress) string {
		var out []string
		for _, x := range a {
			out = append(out, x.IP+"/"+x.TargetRef.Name+"/"+*x.NodeName)
		}
		return strings.Join(out, ",")
	}
	if got := ips(ss.Addresses); got != "10.1.0.1/web-0/n1" {
		t.Errorf("addresses = %s", got)
	}
	if got := ips(ss.NotReadyAddresses); got != "10.1.0.0/web-1/n1" {
		t.Errorf("notReadyAddresses = %s (the terminating pod is left out)", got)
	}
	if len(ss.Ports) != 1 || ss.Ports[0].Name != "http" || ss.Ports[0].Port != 8080 {
		t.Errorf("ports = %+v", ss.Ports)
	}
	if ep.Labels[labelEndpointsManagedBy] != EndpointsControllerName || ep.Labels["team"] != "a" {
		t.Errorf("labels = %v", ep.Labels)
	}
	if changed, _ := New().Sync(s); changed {
		t.Error("a fresh controller rewrote unchanged objects")
	}
	delete(s.Services, "shop/web")
	s.Bump()
	_, _ = c.Sync(s)
	if _, ok := s.Endpoints["shop/web"]; ok {
		t.Error("Endpoints of a deleted Service kept")
	}
}
