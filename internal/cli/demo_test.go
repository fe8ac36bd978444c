package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestDemo runs `berth demo` (the README's first command) and checks the
// walk-through reaches the seed's observable results.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	if code := Run([]string{"demo"}, nil, &out, &out); code != 0 {
		t.Fatalf("berth demo exited %d:\n%s", code, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"clusterconfig.eksctl.io/eks-workshop created",
		"deployment.apps/ui configured",
		`Waiting for deployment "ui" rollout to finish: 1 old replicas are pending termination...`,
		"0/4 nodes are available: 1 node(s) had untolerated taint {frontend: true}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
		`deployment "ui" successfully rolled out`,
		"Tolerations:                 frontend:NoExecute op=Exists",
		"Taints:             frontend=true:NoExecute",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	var again bytes.Buffer
	Run([]string{"demo"}, nil, &again, &again)
	if again.String() != got {
		t.Error("two demo runs printed different output")
	}
}
