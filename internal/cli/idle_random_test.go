package cli

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdleAdvanceRandomClusters runs small random clusters through random
// commands (advances of random lengths, taints, cordons, drains, node
// failures, deletions, rollouts) and, after each command that changed the
// state, compares idle advances with the controllers' (probeIdle): the
// scenarios cover what users do, these what nobody wrote a scenario for.
func TestIdleAdvanceRandomClusters(t *testing.T) {
	seeds := int64(8)
	if s := os.Getenv("BERTH_IDLE_SEEDS"); s != "" {
		fmt.Sscan(s, &seeds)
	}
	var probes idleCounts
	for seed := int64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			state, files := t.TempDir(), t.TempDir()
			c := randomCluster(r)
			run := func(args ...string) {
				before := readDir(t, state)
				var out strings.Builder
				code := Run(append([]string{"--state", state}, args...), strings.NewReader(""), &out, &out)
				if code != 0 {
					// Refusals are part of the walk (a drain a budget
					// blocks, a node failed twice); they change nothing.
					t.Logf("%q: exit %d: %s", strings.Join(args, " "), code, out.String())
				}
				if code == 0 && !equalFiles(before, readDir(t, state)) {
					probes.add(probeIdle(t, fmt.Sprintf("seed %d: after %q", seed, strings.Join(args, " ")), state))
				}
			}
			manifest := func(v int) string {
				path := filepath.Join(files, fmt.Sprintf("v%d.yaml", v))
				if err := os.WriteFile(path, []byte(c.yaml(v)), 0o644); err != nil {
					t.Fatal(err)
				}
				return path
			}
			run("apply", "-f", manifest(0))
			version := 0
			for step := 0; step < 10; step++ {
				node := c.nodes[r.Intn(len(c.nodes))]
				switch k := r.Intn(10); {
				case k < 4:
					run("advance", []string{"1s", "4s", "12s", "45s", "3m", "11m", "1h"}[r.Intn(7)])
				case k == 4:
					run("taint", "nodes", node, "dedicated=x:NoExecute")
				case k == 5:
					run([]string{"cordon", "uncordon"}[r.Intn(2)], node)
				case k == 6:
					run("drain", node, "--ignore-daemonsets", "--force", "--timeout", "2m")
				case k == 7:
					run("node", "fail", node)
				case k == 8:
					run("delete", "pod", "-l", "app="+c.apps[r.Intn(len(c.apps))], "--grace-period", fmt.Sprint(r.Intn(40)))
				default:
					version++
					run("apply", "-f", manifest(version))
				}
			}
		})
	}
	probes.check(t)
}

// randomCluster is a few kind-style nodes and workloads with random sizes,
// readiness delays, tolerations, grace periods and budgets.
type randomClusterSpec struct {
	nodes []string
	apps  []string
	text  []string // documents; "{{v}}" is the manifest version
}

func randomCluster(r *rand.Rand) *randomClusterSpec {
	c := &randomClusterSpec{}
	for i := 0; i < 2+r.Intn(3); i++ {
		name := fmt.Sprintf("worker-%d", i)
		c.nodes = append(c.nodes, name)
		taint := ""
		if r.Intn(4) == 0 {
			taint = "\n  taints: [{key: special, value: \"true\", effect: NoSchedule}]"
		}
		c.text = append(c.text, fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: %s
  labels: {kubernetes.io/hostname: %s, kubernetes.io/os: linux, kubernetes.io/arch: amd64, topology.kubernetes.io/zone: zone-%c}
spec:
  providerID: kind://docker/kind/%s%s
status:
  capacity: {cpu: "%d", memory: 8Gi, pods: "20"}`, name, name, 'a'+rune(i%2), name, taint, 2+r.Intn(4)))
	}
	for i := 0; i < 1+r.Intn(3); i++ {
		app := fmt.Sprintf("app%d", i)
		c.apps = append(c.apps, app)
		tol := ""
		if r.Intn(2) == 0 {
			tol = fmt.Sprintf("\n      tolerations: [{key: dedicated, operator: Exists, effect: NoExecute, tolerationSeconds: %d}, {key: special, operator: Exists}]", []int{20, 70, 400}[r.Intn(3)])
		}
		minReady := []int{0, 8, 45}[r.Intn(3)]
		c.text = append(c.text, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s}
spec:
  replicas: %d
  minReadySeconds: %d
  progressDeadlineSeconds: %d
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      terminationGracePeriodSeconds: %d%s
      containers: [{name: c, image: "nginx:1.{{v}}", resources: {requests: {cpu: %dm, memory: 64Mi}}}]`,
			app, 1+r.Intn(5), minReady, minReady+[]int{15, 600}[r.Intn(2)], app, app,
			[]int{0, 5, 30, 90}[r.Intn(4)], tol, 100+100*r.Intn(15)))
	}
	c.text = append(c.text, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: app0}
  ports: [{port: 80}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: app0}
spec:
  maxUnavailable: %d
  selector: {matchLabels: {app: app0}}`, r.Intn(2)))
	if r.Intn(2) == 0 {
		c.text = append(c.text, `apiVersion: batch/v1
kind: Job
metadata: {name: once-{{v}}}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]`)
	}
	if r.Intn(2) == 0 {
		c.text = append(c.text, `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: c, image: "agent:{{v}}", resources: {requests: {cpu: 50m}}}]`)
	}
	if r.Intn(2) == 0 {
		c.text = append(c.text, fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: %d
  minReadySeconds: %d
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: "pg:{{v}}", resources: {requests: {cpu: 200m}}}]`, 1+r.Intn(3), []int{0, 20}[r.Intn(2)]))
	}
	return c
}

func (c *randomClusterSpec) yaml(version int) string {
	return strings.ReplaceAll(strings.Join(c.text, "\n---\n"), "{{v}}", fmt.Sprint(version)) + "\n"
}
