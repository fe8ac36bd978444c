package eksctl

import (
	"strings"
	"testing"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

func TestResolveFargateProfiles(t *testing.T) {
	info := cluster.Info{Name: "c", Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, VPCCIDR: "10.42.0.0/16"}
	privA := aws.SubnetID("c", "us-west-2a")
	pubA := aws.VPCSubnetID("c", aws.Subnet{Zone: "us-west-2a"})
	sel := []FargateProfileSelector{{Namespace: "default"}}
	six := []FargateProfileSelector{{Namespace: "a"}, {Namespace: "b"}, {Namespace: "c"}, {Namespace: "d"}, {Namespace: "e"}, {Namespace: "f"}}
	tests := []struct {
		name    string
		fp      FargateProfile
		subnets []string
		err     string
	}{
		{name: "all private subnets by default", fp: FargateProfile{Name: "fp", Selectors: sel},
			subnets: []string{privA, aws.SubnetID("c", "us-west-2b")}},
		{name: "one private subnet", fp: FargateProfile{Name: "fp", Selectors: sel, Subnets: []string{privA}}, subnets: []string{privA}},
		{name: "public subnet", fp: FargateProfile{Name: "fp", Selectors: sel, Subnets: []string{pubA}},
			err: "InvalidParameterException: Subnet " + pubA + " provided in Fargate Profile is not a private subnet"},
		{name: "unknown subnet", fp: FargateProfile{Name: "fp", Selectors: sel, Subnets: []string{"subnet-1"}}, err: `subnet "subnet-1" is not a subnet of cluster "c"`},
		{name: "empty name", fp: FargateProfile{Selectors: sel}, err: "invalid Fargate profile: empty name"},
		{name: "reserved prefix", fp: FargateProfile{Name: "eks-x", Selectors: sel}, err: `invalid Fargate profile "eks-x": name should NOT start with "eks-"`},
		{name: "no selector", fp: FargateProfile{Name: "fp"}, err: `invalid Fargate profile "fp": no profile selector`},
		{name: "empty namespace", fp: FargateProfile{Name: "fp", Selectors: []FargateProfileSelector{{Labels: map[string]string{"a": "b"}}}},
			err: `invalid Fargate profile "fp": invalid profile selector at index #0: empty namespace`},
		{name: "six selectors", fp: FargateProfile{Name: "fp", Selectors: six}, err: "6 selectors; EKS accepts up to 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &ClusterConfig{FargateProfiles: []*FargateProfile{&tt.fp}}
			got, err := cfg.ResolveFargateProfiles(info)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got[0].Subnets, ",") != strings.Join(tt.subnets, ",") {
				t.Errorf("subnets = %v, want %v", got[0].Subnets, tt.subnets)
			}
		})
	}
}
