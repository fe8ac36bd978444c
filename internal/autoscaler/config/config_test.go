package config

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		check   func(o Options) bool
	}{
		{name: "defaults", args: []string{"./cluster-autoscaler"}, check: func(o Options) bool {
			return o.ScanInterval == 10*time.Second && o.Expanders[0] == ExpanderLeastWaste && o.SkipNodesWithLocalStorage
		}},
		{name: "upstream example", args: []string{"./cluster-autoscaler", "--v=4", "--stderrthreshold=info", "--cloud-provider=aws",
			"--skip-nodes-with-local-storage=false", "--expander=least-waste",
			"--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/roles"},
			check: func(o Options) bool {
				return !o.SkipNodesWithLocalStorage && len(o.AutoDiscovery) == 1 && len(o.AutoDiscovery[0].Tags) == 2
			}},
		{name: "separate value and bool alone", args: []string{"--scan-interval", "30s", "--balance-similar-node-groups"},
			check: func(o Options) bool { return o.ScanInterval == 30*time.Second && o.BalanceSimilarNodeGroups }},
		{name: "nodes", args: []string{"--nodes=1:5:eks-scaler"}, check: func(o Options) bool {
			return len(o.NodeGroups) == 1 && o.NodeGroups[0] == NodeGroupSpec{Min: 1, Max: 5, Name: "eks-scaler"}
		}},
		{name: "health limits", args: []string{"--ok-total-unready-count=0", "--max-total-unready-percentage=10"},
			check: func(o Options) bool { return o.OkTotalUnreadyCount == 0 && o.MaxTotalUnreadyPercentage == 10 }},
		{name: "health limit defaults", args: nil,
			check: func(o Options) bool { return o.OkTotalUnreadyCount == 3 && o.MaxTotalUnreadyPercentage == 45 }},
		{name: "provision and backoff", args: []string{"--max-node-provision-time=20s", "--new-pod-scale-up-delay=30s",
			"--initial-node-group-backoff-duration=1m", "--max-node-group-backoff-duration=8m"},
			check: func(o Options) bool {
				return o.MaxNodeProvisionTime == 20*time.Second && o.NewPodScaleUpDelay == 30*time.Second &&
					o.InitialBackoff == time.Minute && o.MaxBackoff == 8*time.Minute
			}},
		{name: "chain", args: []string{"--expander=priority,least-waste"}, check: func(o Options) bool { return len(o.Expanders) == 2 }},
		{name: "unknown flag", args: []string{"--scale-down-enable=false"}, wantErr: "flag --scale-down-enable: unknown flag"},
		{name: "bad duration", args: []string{"--scan-interval=ten"}, wantErr: "flag --scan-interval: invalid duration"},
		{name: "bad nodes", args: []string{"--nodes=1:eks"}, wantErr: "flag --nodes: want <min>:<max>:<asg-name>"},
		{name: "price on aws", args: []string{"--expander=price"}, wantErr: "no pricing model"},
		{name: "gce", args: []string{"--cloud-provider=gce"}, wantErr: "aws cloud provider only"},
		{name: "threshold", args: []string{"--scale-down-utilization-threshold=1.5"}, wantErr: "between 0 and 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(o) {
				t.Fatalf("unexpected options %+v", o)
			}
		})
	}
}
