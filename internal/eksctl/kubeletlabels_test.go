package eksctl

import (
	"strings"
	"testing"
)

func TestKubeletRefusedLabels(t *testing.T) {
	head := "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: us-west-2, version: \"%s\"}\n"
	tests := []struct {
		name, version, labels string
		wantErr               string
	}{
		{"allowed prefix node.kubernetes.io", "1.34", "{node.kubernetes.io/role: master}", ""},
		{"allowed kubelet prefix", "1.34", "{kubelet.kubernetes.io/x: \"z\"}", ""},
		{"allowed set", "1.34", "{topology.kubernetes.io/zone: us-west-2a}", ""},
		{"other domains are free", "1.34", "{example.com/role: db, role: db}", ""},
		{"kubernetes.io/role refused", "1.30", "{kubernetes.io/role: master, node-role.kubernetes.io/worker: \"\"}",
			"managedNodeGroups[0].labels: the kubelet (Kubernetes 1.30) would refuse to start with these node labels, so the nodes would never join: " +
				"unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [kubernetes.io/role node-role.kubernetes.io/worker]\n" +
				"--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (kubelet.kubernetes.io, node.kubernetes.io) " +
				"or be in the specifically allowed set (beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, " +
				"failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, kubernetes.io/arch, kubernetes.io/hostname, " +
				"kubernetes.io/os, node.kubernetes.io/instance-type, topology.kubernetes.io/region, topology.kubernetes.io/zone)"},
		{"k8s.io subdomain refused", "1.34", "{team.k8s.io/owner: a}", "[team.k8s.io/owner]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(head, "%s", tc.version, 1) + "managedNodeGroups: [{name: a, labels: " + tc.labels + "}]\n"
			cfg, err := Decode([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = cfg.Resolve("c.yaml")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
