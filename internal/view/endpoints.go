package view

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/version"
)

// Endpoints and EndpointSlices print as the API server's table printers
// print them and describe as kubectl's describers do (docs/services.md).
var (
	endpointsColumns     = []metav1.TableColumnDefinition{nameCol(), col("Endpoints"), col("Age")}
	endpointSliceColumns = []metav1.TableColumnDefinition{nameCol(), col("AddressType"), col("Ports"), col("Endpoints"), col("Age")}
)

func init() {
	builtins[schema.GroupKind{Kind: "Endpoints"}] = builtin{columns: endpointsColumns, row: rowOf(endpointsRow),
		describe: describeOf(describeEndpoints)}
	builtins[schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}] = builtin{columns: endpointSliceColumns,
		row: rowOf(endpointSliceRow), describe: describeOf(describeEndpointSlice)}
}

func endpointsRow(s *cluster.State, ep *corev1.Endpoints) metav1.TableRow {
	return row(ep, ep.Name, formatEndpoints(ep), since(s, ep.CreationTimestamp))
}

// formatEndpoints is the ENDPOINTS column: the first three "ip:port"
// (every port of every subset), then " + N more...".
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	var list []string
	count := 0
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == 3 {
					break
				}
				list = append(list, a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == 3 {
					break
				}
				list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	text := strings.Join(list, ",")
	if count > 3 {
		return fmt.Sprintf("%s + %d more...", text, count-3)
	}
	return text
}

func endpointSliceRow(s *cluster.State, sl *discoveryv1.EndpointSlice) metav1.TableRow {
	var ports, addrs []string
	for _, p := range sl.Ports {
		n := "*"
		if p.Port != nil {
			n = strconv.Itoa(int(*p.Port))
		} else if p.Name != nil {
			n = *p.Name
		}
		ports = append(ports, n)
	}
	for _, ep := range sl.Endpoints {
		addrs = append(addrs, ep.Addresses...)
	}
	return row(sl, sl.Name, string(sl.AddressType), listWithMore(ports), listWithMore(addrs), since(s, sl.CreationTimestamp))
}

// listWithMore is the printers' first-three list: "<unset>" when empty.
func listWithMore(items []string) string {
	if len(items) == 0 {
		return "<unset>"
	}
	if len(items) > 3 {
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:3], ","), len(items)-3)
	}
	return strings.Join(items, ",")
}

func describeEndpoints(s *cluster.State, ep *corev1.Endpoints) string {
	events := eventQuery{kind: "Endpoints", namespace: ep.Namespace, name: ep.Name, uids: uidsOf(ep)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", ep.Name)
		w.write(level0, "Namespace:\t%s\n", ep.Namespace)
		printLabelsMultiline(w, "Labels", ep.Labels)
		printAnnotationsMultiline(w, "Annotations", ep.Annotations)
		w.write(level0, "Subsets:\n")
		for _, ss := range ep.Subsets {
			w.write(level1, "Addresses:\t%s\n", joinOrNone(ss.Addresses))
			w.write(level1, "NotReadyAddresses:\t%s\n", joinOrNone(ss.NotReadyAddresses))
			if len(ss.Ports) > 0 {
				w.write(level1, "Ports:\n")
				w.write(level2, "Name\tPort\tProtocol\n")
				w.write(level2, "----\t----\t--------\n")
				for _, p := range ss.Ports {
					name := p.Name
					if name == "" {
						name = "<unset>"
					}
					w.write(level2, "%s\t%d\t%s\n", name, p.Port, p.Protocol)
				}
			}
			w.write(level0, "\n")
		}
		describeEvents(s, events, w)
	})
}

func joinOrNone(addrs []corev1.EndpointAddress) string {
	if len(addrs) == 0 {
		return "<none>"
	}
	ips := make([]string, len(addrs))
	for i, a := range addrs {
		ips[i] = a.IP
	}
	return strings.Join(ips, ",")
}

func describeEndpointSlice(s *cluster.State, sl *discoveryv1.EndpointSlice) string {
	events := eventQuery{kind: "EndpointSlice", namespace: sl.Namespace, name: sl.Name, uids: uidsOf(sl)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", sl.Name)
		w.write(level0, "Namespace:\t%s\n", sl.Namespace)
		printLabelsMultiline(w, "Labels", sl.Labels)
		printAnnotationsMultiline(w, "Annotations", sl.Annotations)
		w.write(level0, "AddressType:\t%s\n", string(sl.AddressType))
		if len(sl.Ports) == 0 {
			w.write(level0, "Ports: <unset>\n")
		} else {
			w.write(level0, "Ports:\n")
			w.write(level1, "Name\tPort\tProtocol\n")
			w.write(level1, "----\t----\t--------\n")
			for _, p := range sl.Ports {
				name, port, proto := "<unset>", "<unset>", ""
				if p.Name != nil && *p.Name != "" {
					name = *p.Name
				}
				if p.Port != nil {
					port = strconv.Itoa(int(*p.Port))
				}
				if p.Protocol != nil {
					proto = string(*p.Protocol)
				}
				w.write(level1, "%s\t%s\t%s\n", name, port, proto)
			}
		}
		if len(sl.Endpoints) == 0 {
			w.write(level0, "Endpoints: <none>\n")
		} else {
			w.write(level0, "Endpoints:\n")
			for _, ep := range sl.Endpoints {
				addrs := strings.Join(ep.Addresses, ", ")
				if addrs == "" {
					addrs = "<none>"
				}
				w.write(level1, "- Addresses:\t%s\n", addrs)
				w.write(level2, "Conditions:\n")
				w.write(level3, "Ready:\t%s\n", boolOrUnset(ep.Conditions.Ready))
				w.write(level2, "Hostname:\t%s\n", stringOrUnset(ep.Hostname))
				if ep.TargetRef != nil {
					w.write(level2, "TargetRef:\t%s/%s\n", ep.TargetRef.Kind, ep.TargetRef.Name)
				}
				w.write(level2, "NodeName:\t%s\n", stringOrUnset(ep.NodeName))
				w.write(level2, "Zone:\t%s\n", stringOrUnset(ep.Zone))
			}
		}
		describeEvents(s, events, w)
	})
}

func boolOrUnset(b *bool) string {
	if b == nil {
		return "<unset>"
	}
	return strconv.FormatBool(*b)
}

func stringOrUnset(p *string) string {
	if p == nil {
		return "<unset>"
	}
	return *p
}

// warnDeprecated prints the API server's deprecation warning as kubectl
// shows it ("Warning: ..." on stderr, once) when a request reads v1
// Endpoints from a cluster of Kubernetes 1.33 or later, where the API is
// deprecated in favour of EndpointSlices.
func warnDeprecated(errOut io.Writer, s *cluster.State, reqs []request) {
	v, err := version.Parse(s.Info.KubernetesVersion)
	if err != nil || !v.AtLeast(33, 0) {
		return
	}
	for _, rq := range reqs {
		if rq.r.GVK.GroupKind() == (schema.GroupKind{Kind: "Endpoints"}) {
			fmt.Fprintln(errOut, "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice")
			return
		}
	}
}

// serviceSlices are the EndpointSlices kubectl describe service reads: those
// labelled with the Service's name, in list order.
func serviceSlices(s *cluster.State, svc *corev1.Service) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, key := range cluster.SortedKeys(s.EndpointSlices) {
		sl := s.EndpointSlices[key]
		if sl.Namespace == svc.Namespace && sl.Labels[discoveryv1.LabelServiceName] == svc.Name {
			out = append(out, sl)
		}
	}
	return out
}

// formatServiceEndpoints is describe service's Endpoints line for one
// port name: the ready endpoints ("ip:port", or the address alone for a
// slice without ports), first three then " + N more...".
func formatServiceEndpoints(slices []*discoveryv1.EndpointSlice, portName string) string {
	if len(slices) == 0 {
		return "<none>"
	}
	var list []string
	more := false
	count := 0
	add := func(ep *discoveryv1.Endpoint, text func() string) {
		if len(list) == 3 {
			more = true
		}
		if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
			return
		}
		if !more {
			list = append(list, text())
		}
		count++
	}
	for _, sl := range slices {
		if len(sl.Ports) == 0 {
			for i := range sl.Endpoints {
				ep := &sl.Endpoints[i]
				add(ep, func() string { return ep.Addresses[0] })
			}
			continue
		}
		for _, p := range sl.Ports {
			if p.Name == nil || *p.Name != portName {
				continue
			}
			for i := range sl.Endpoints {
				ep := &sl.Endpoints[i]
				add(ep, func() string { return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*p.Port))) })
			}
		}
	}
	text := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", text, count-3)
	}
	return text
}
