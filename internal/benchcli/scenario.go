// Package benchcli holds the benchmarks of whole berth commands on a large
// state (docs/performance.md): apply of 5,000 nodes and 10,000 pending pods,
// the read commands and an idle advance on the state it leaves. They run
// each command through cli.Run, the entry point of the berth binary, so they
// measure what a user waits for and keep working whatever the state store
// becomes. The scenario they apply comes from Write, a small generator of
// its own (the conformance generator lives in another module).
package benchcli

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
)

// Write writes a basic-profile-like scenario as multi-document YAML: nodes
// nodes of three sizes, as exported from a cluster that is not on EC2 (no
// instance-type label or providerID, so no VPC or ENI model applies; each
// states its capacity and podCIDR), spread over three zones, then pods bare
// pending pods over three namespaces, nine in ten with CPU and memory
// requests. Pods average a quarter CPU and 400Mi, so every pod fits while
// the nodes average more than two pods each of room; seed draws the sizes.
func Write(w io.Writer, nodes, pods int, seed uint64) error {
	return write(w, fmt.Sprintf("%d nodes, %d pods", nodes, pods), nodes, pods, seed)
}

// write writes the header line, namespaces, nodes and bare pods.
func write(w io.Writer, header string, nodes, pods int, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "# benchcli: %s, seed %d\n", header, seed)
	for _, ns := range namespaces[1:] {
		fmt.Fprintf(b, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
	}
	for i := 0; i < nodes; i++ {
		size := nodeSizes[r.IntN(len(nodeSizes))]
		fmt.Fprintf(b, nodeDoc, NodeName(i), NodeName(i), zones[i%len(zones)], 1+i/256, i%256, 1+i/256, i%256,
			size.cpu, size.mem, size.cpu, size.mem, i/250, 1+i%250)
	}
	for i := 0; i < pods; i++ {
		app := apps[r.IntN(len(apps))]
		fmt.Fprintf(b, podDoc, i, namespaces[i%len(namespaces)], app, app)
		if r.IntN(10) < 9 {
			fmt.Fprintf(b, requestsDoc, 50+r.IntN(400), 64+r.IntN(700))
		}
	}
	return b.Flush()
}

// WriteDeployments writes the nodes Write would, then deployments
// Deployments of replicas replicas each (requests drawn as Write draws a
// pod's), over the same namespaces: the 100,000-pod load.
func WriteDeployments(w io.Writer, nodes, deployments, replicas int, seed uint64) error {
	header := fmt.Sprintf("%d nodes, %d Deployments x %d replicas", nodes, deployments, replicas)
	if err := write(w, header, nodes, 0, seed); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(seed+1, seed^0x2545f4914f6cdd1d))
	b := bufio.NewWriter(w)
	for i := 0; i < deployments; i++ {
		name := fmt.Sprintf("app-%03d", i)
		fmt.Fprintf(b, deploymentDoc, name, namespaces[i%len(namespaces)], replicas, name, name, name, 50+r.IntN(400), 64+r.IntN(700))
	}
	return b.Flush()
}

// NodeName is the name Write gives node i.
func NodeName(i int) string { return fmt.Sprintf("node-%04d", i) }

var (
	namespaces = []string{"default", "team-a", "team-b"}
	zones      = []string{"zone-a", "zone-b", "zone-c"}
	apps       = []string{"web", "api", "db", "cache", "batch"}
	nodeSizes  = []struct{ cpu, mem string }{{"4", "16Gi"}, {"8", "32Gi"}, {"16", "64Gi"}}
)

const nodeDoc = `---
apiVersion: v1
kind: Node
metadata:
  name: %s
  labels:
    kubernetes.io/hostname: %s
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    topology.kubernetes.io/zone: %s
spec:
  podCIDR: 10.%d.%d.0/24
  podCIDRs: [10.%d.%d.0/24]
status:
  capacity: {cpu: "%s", memory: %s, pods: "110"}
  allocatable: {cpu: "%s", memory: %s, pods: "110"}
  addresses:
  - {type: InternalIP, address: 192.168.%d.%d}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady}
`

const podDoc = `---
apiVersion: v1
kind: Pod
metadata:
  name: pod-%05d
  namespace: %s
  labels: {app: %s}
spec:
  containers:
  - name: app
    image: registry.local/%s:1
`

const requestsDoc = `    resources:
      requests: {cpu: %dm, memory: %dMi}
`

const deploymentDoc = `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
  namespace: %s
spec:
  replicas: %d
  selector:
    matchLabels: {app: %s}
  template:
    metadata:
      labels: {app: %s}
    spec:
      containers:
      - name: app
        image: registry.local/%s:1
        resources:
          requests: {cpu: %dm, memory: %dMi}
`
