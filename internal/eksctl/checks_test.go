package eksctl

import (
	"strings"
	"testing"
)

func TestConfigChecks(t *testing.T) {
	tests := []struct {
		name, doc, want string // want "" when accepted
	}{
		{"AL2 on arm64 is fine", header + "  version: \"1.30\"\nmanagedNodeGroups: [{name: a, instanceType: t4g.medium, amiFamily: AmazonLinux2}]\n", ""},
		{"Ubuntu is not checked", header + "nodeGroups: [{name: a, instanceType: t4g.medium, amiFamily: Ubuntu2204}]\n", ""},
		{"self-managed AL2 has no arm64 GPU AMI", header + "  version: \"1.30\"\nnodeGroups: [{name: a, instanceType: g5g.xlarge, amiFamily: AmazonLinux2}]\n",
			"nodeGroups[0]: g5g.xlarge instance types are not supported for unmanaged nodegroups with AMIFamily AmazonLinux2"},
		{"managed groups fall back to the plain AMI", header + "  version: \"1.30\"\nmanagedNodeGroups: [{name: a, instanceType: g5g.xlarge, amiFamily: AmazonLinux2}]\n", ""},
		{"Windows on Graviton", header + "managedNodeGroups: [{name: a, instanceTypes: [m6g.large], amiFamily: WindowsServer2022FullContainer}]\n",
			"managedNodeGroups[0]: m6g.large instance types are not supported for managed nodegroups with AMIFamily WindowsServer2022FullContainer"},
		{"unknown region", "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: x, region: mars-north-1}\n",
			"metadata.region: --region=mars-north-1 is not supported - use one of: us-west-1, us-west-2,"},
		{"zone of another region", header + "availabilityZones: [us-west-2a, us-east-1b]\n",
			`availabilityZones[1]: "us-east-1b" is not an availability zone of region "us-west-2"`},
		{"region given as a zone", header + "availabilityZones: [us-west-2, us-west-2b]\n",
			`availabilityZones[0]: "us-west-2" is not an availability zone of region "us-west-2"`},
		{"negative minSize", header + "nodeGroups: [{name: a, minSize: -2}]\n", "nodeGroups[0].minSize: -2: must be 0 or more"},
		{"unknown key in instancesDistribution", header + "nodeGroups: [{name: a, instancesDistribution: {instanceTypes: [m5.large], onDemandBase: 1}}]\n",
			`nodeGroups[0].instancesDistribution.onDemandBase: error unmarshaling JSON: while decoding JSON: json: unknown field "onDemandBase"`},
		{"keys eksctl knows are accepted", header + "iam: {withOIDC: true}\nmanagedNodeGroups: [{name: a, updateConfig: {maxUnavailable: 1}, ssh: {allow: false}}]\n", ""},
		{"first unknown key in key order, as eksctl's YAML-to-JSON step sorts them", header + "zzz: 1\naaa: 2\n", `aaa: error unmarshaling JSON: while decoding JSON: json: unknown field "aaa"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := resolve(t, tc.doc)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("error = %v, want it to start with %q", err, tc.want)
			}
		})
	}
}
