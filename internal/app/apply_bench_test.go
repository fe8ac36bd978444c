package app

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-sim/berth/internal/benchcpu"
)

// profileManifest writes a scenario the size of issue 14's profiles (5,000
// nodes, 10,000 pending pods) in the shape the conformance generator writes
// (sigs.k8s.io/yaml output: sorted keys, defaults filled in). With affinity
// the pods carry node affinity and pod (anti-)affinity terms.
func profileManifest(nodes, pods int, affinity bool) string {
	var b strings.Builder
	for _, ns := range []string{"team-a", "team-b"} {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  labels:\n    kubernetes.io/metadata.name: %s\n  name: %s\nspec:\n  finalizers:\n  - kubernetes\nstatus:\n  phase: Active\n---\n", ns, ns)
	}
	for i, pc := range []string{"high", "low"} {
		fmt.Fprintf(&b, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: %s\npreemptionPolicy: PreemptLowerPriority\nvalue: %d\n---\n", pc, 1000-900*i)
	}
	zones := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	types := []string{"m5.large", "c5.xlarge", "r5.large"}
	for i := 0; i < nodes; i++ {
		cpu := []string{"2", "4", "16"}[i%3]
		fmt.Fprintf(&b, `apiVersion: v1
kind: Node
metadata:
  labels:
    disk: ssd
    gen: "%d"
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: node-%03d
    kubernetes.io/os: linux
    node.kubernetes.io/instance-type: %s
    tier: a
    topology.kubernetes.io/region: us-east-1
    topology.kubernetes.io/zone: %s
  name: node-%03d
spec: {}
status:
  allocatable:
    cpu: "%s"
    memory: 64Gi
    pods: "29"
  capacity:
    cpu: "%s"
    memory: 64Gi
    pods: "29"
  conditions:
  - lastHeartbeatTime: null
    lastTransitionTime: null
    status: "True"
    type: Ready
  daemonEndpoints:
    kubeletEndpoint:
      Port: 0
  nodeInfo:
    architecture: ""
    bootID: ""
    containerRuntimeVersion: ""
    kernelVersion: ""
    kubeProxyVersion: ""
    kubeletVersion: ""
    machineID: ""
    operatingSystem: ""
    osImage: ""
    systemUUID: ""
---
`, i%8, i, types[i%3], zones[i%3], i, cpu, cpu)
	}
	for i := 0; i < pods; i++ {
		ns := []string{"team-a", "team-b"}[i%2]
		app := []string{"api", "cache", "batch"}[i%3]
		fmt.Fprintf(&b, `apiVersion: v1
kind: Pod
metadata:
  labels:
    app: %s
    pod-template-hash: 7d9f
    tier: c
  name: pod-%03d
  namespace: %s
  uid: uid-%s-pod-%03d
spec:
`, app, i, ns, ns, i)
		if affinity {
			fmt.Fprintf(&b, `  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - preference:
          matchExpressions:
          - key: gen
            operator: Gt
            values:
            - "%d"
          - key: disk
            operator: Exists
        weight: 4
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - podAffinityTerm:
          labelSelector:
            matchExpressions:
            - key: pod-template-hash
              operator: In
              values:
              - 7d9f
            matchLabels:
              app: %s
          matchLabelKeys:
          - pod-template-hash
          namespaceSelector: {}
          topologyKey: kubernetes.io/hostname
        weight: 55
`, i%6, app)
		}
		fmt.Fprintf(&b, `  containers:
  - image: registry.local/%s:2
    imagePullPolicy: IfNotPresent
    name: app
    resources:
      requests:
        cpu: %dm
        memory: %dMi
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
  dnsPolicy: ClusterFirst
  enableServiceLinks: true
  preemptionPolicy: PreemptLowerPriority
  priority: 0
  restartPolicy: Always
  schedulerName: default-scheduler
  securityContext: {}
  serviceAccountName: default
  terminationGracePeriodSeconds: 30
  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 300
  - effect: NoExecute
    key: node.kubernetes.io/unreachable
    operator: Exists
    tolerationSeconds: 300
status:
  phase: Pending
---
`, app, 100+i%7*50, 128+i%5*64)
	}
	return b.String()
}

// BenchmarkLoadProfile measures `berth apply`'s work before the cluster
// runs: reading and decoding the file, validation, and admitting every
// object into a new state (what Apply does before it settles and saves).
// Read cpu-ns/op (CPU time per apply) on a shared host:
// go test -run x -bench LoadProfile -cpu 1 ./internal/app
func BenchmarkLoadProfile(b *testing.B) {
	for _, tc := range []struct {
		name     string
		affinity bool
	}{{"basic", false}, {"affinity", true}} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), tc.name+".yaml")
			data := profileManifest(5000, 10000, tc.affinity)
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			a, err := Open(Options{StateDir: b.TempDir(), Seed: 1, Out: io.Discard, ErrOut: io.Discard})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, cpuOK := benchcpu.Process()
			for i := 0; i < b.N; i++ {
				// The steps of Apply up to its commit.
				objs, err := a.decode([]string{path}, "")
				if err != nil {
					b.Fatal(err)
				}
				if err := validateForApply(objs); err != nil {
					b.Fatal(err)
				}
				work := a.state.Clone()
				if err := a.prepareNew(work, objs); err != nil {
					b.Fatal(err)
				}
				if err := setNamespaces(objs, ""); err != nil {
					b.Fatal(err)
				}
				for _, o := range objs {
					if _, err := applyOne(work, o); err != nil {
						b.Fatal(err)
					}
				}
			}
			// CPU per apply (GC and parallel decoding included): the figure
			// to compare on a busy host.
			if cpu1, ok := benchcpu.Process(); ok && cpuOK {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// TestApplyProfileParallel applies a small profile (enough objects for the
// per-object work to go parallel) and checks kubectl's line for every
// object, in file order; run under -race it also checks the parallel parts
// share nothing.
func TestApplyProfileParallel(t *testing.T) {
	path := writeManifest(t, "profile.yaml", profileManifest(40, 80, true))
	a, out := open(t, t.TempDir())
	if err := a.Apply(ApplyRequest{Files: []string{path}}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, ns := range []string{"team-a", "team-b"} {
		want = append(want, "namespace/"+ns+" created")
	}
	want = append(want, "priorityclass.scheduling.k8s.io/high created", "priorityclass.scheduling.k8s.io/low created")
	for i := 0; i < 40; i++ {
		want = append(want, fmt.Sprintf("node/node-%03d created", i))
	}
	for i := 0; i < 80; i++ {
		want = append(want, fmt.Sprintf("pod/pod-%03d created", i))
	}
	if got := strings.TrimSpace(out.String()); got != strings.Join(want, "\n") {
		t.Errorf("apply printed\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}
