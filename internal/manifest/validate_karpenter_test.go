package manifest

import (
	"strings"
	"testing"
)

// Karpenter validation: the CRD schema and CEL messages verbatim
// (docs/karpenter-apis.md), and the v1alpha5 webhooks' knative messages.

const (
	npHead = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n"
	npRef  = "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
	// npGood is a minimal valid NodePool; tests append to its spec.
	npGood = npHead + "  template:\n    spec:\n      requirements: []\n" + npRef
	ncHead = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: nc}\nspec:\n"
	ncSel  = "  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n"
	ncGood = ncHead + ncSel + "  role: R\n  amiSelectorTerms: [{alias: al2023@latest}]\n"
	prHead = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: pr}\nspec:\n"
	ntHead = "apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata: {name: nt}\nspec:\n"
	coreWH = `admission webhook "validation.webhook.karpenter.sh" denied the request: validation failed: `
	awsWH  = `admission webhook "validation.webhook.karpenter.k8s.aws" denied the request: validation failed: `
)

// npReqs is a NodePool whose requirements are the given YAML list items.
func npReqs(items ...string) string {
	return npHead + "  template:\n    spec:\n      requirements:\n" + "      - " + strings.Join(items, "\n      - ") + "\n" + npRef
}

func TestValidateKarpenter(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{name: "minimal nodepool", doc: npGood},
		{
			name: "full nodepool",
			doc: npReqs(`{key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r], minValues: 2}`,
				`{key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["2"]}`,
				`{key: karpenter.sh/capacity-type, operator: In, values: [spot]}`,
				`{key: example.com/team, operator: Exists}`) +
				"      expireAfter: Never\n      terminationGracePeriod: 48h\n" +
				"  disruption:\n    consolidationPolicy: WhenEmpty\n    consolidateAfter: 1h30m\n" +
				"    budgets: [{nodes: \"0\", schedule: \"0 9 * * mon-fri\", duration: 8h, reasons: [Drifted]}, {nodes: 100%}]\n" +
				"  limits: {cpu: 100, nodes: 10}\n  weight: 100\n",
		},
		{
			name: "requirement CEL rules",
			doc: npReqs(`{key: karpenter.sh/capacity-type, operator: In}`,
				`{key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["4", "8"]}`,
				`{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5], minValues: 2}`),
			want: []string{
				`(NodePool np): spec.template.spec.requirements: Invalid value: "array": requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value`,
				`(NodePool np): spec.template.spec.requirements: Invalid value: "array": requirements with 'minValues' must have at least that many values specified in the 'values' field`,
				`(NodePool np): spec.template.spec.requirements: Invalid value: "array": requirements with operator 'In' must have a value defined`,
			},
		},
		{
			name: "requirement schema",
			doc: npReqs(`{key: karpenter.sh/nodepool, operator: In, values: [a]}`,
				`{key: kubernetes.io/hostname, operator: Like}`,
				`{key: karpenter.k8s.aws/secret, operator: Exists, minValues: 51}`,
				`{key: foo.karpenter.sh/x, operator: Gt, values: ["-1"]}`),
			want: []string{
				`(NodePool np): spec.template.spec.requirements[0].key: Invalid value: "string": label "karpenter.sh/nodepool" is restricted`,
				`(NodePool np): spec.template.spec.requirements[1].key: Invalid value: "string": label "kubernetes.io/hostname" is restricted`,
				`(NodePool np): spec.template.spec.requirements[1].operator: Unsupported value: "Like": supported values: "Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"`,
				`(NodePool np): spec.template.spec.requirements[2].key: Invalid value: "string": label domain "karpenter.k8s.aws" is restricted`,
				`(NodePool np): spec.template.spec.requirements[2].minValues: Invalid value: 51: spec.template.spec.requirements[2].minValues in body should be less than or equal to 50`,
				`(NodePool np): spec.template.spec.requirements[3].key: Invalid value: "string": label domain "karpenter.sh" is restricted`,
				`(NodePool np): spec.template.spec.requirements[3].values[0]: Invalid value: "-1": spec.template.spec.requirements[3].values[0] in body should match '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'`,
				`(NodePool np): spec.template.spec.requirements: Invalid value: "array": requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value`,
			},
		},
		{
			name: "template labels",
			doc: npHead + "  template:\n    metadata:\n      labels: {karpenter.sh/nodepool: x, kubernetes.io/hostname: h, karpenter.sh/capacity-type: spot, karpenter.k8s.aws/instance-family: m5, team: \"a b\"}\n" +
				"    spec:\n      requirements: []\n" + npRef,
			want: []string{
				`(NodePool np): spec.template.metadata.labels[team]: Invalid value: "a b": spec.template.metadata.labels[team] in body should match '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'`,
				`(NodePool np): spec.template.metadata.labels: Invalid value: "object": label "karpenter.sh/nodepool" is restricted`,
				`(NodePool np): spec.template.metadata.labels: Invalid value: "object": label "kubernetes.io/hostname" is restricted`,
			},
		},
		{
			name: "nodeClassRef and requirements required",
			doc:  npHead + "  template:\n    spec: {}\n",
			want: []string{
				`(NodePool np): spec.template.spec.requirements: Required value`,
				`(NodePool np): spec.template.spec.nodeClassRef: Required value`,
			},
		},
		{
			name: "nodeClassRef fields",
			doc:  npHead + "  template:\n    spec:\n      requirements: []\n      nodeClassRef: {group: a/b, kind: \"\", name: \"\"}\n",
			want: []string{
				`(NodePool np): spec.template.spec.nodeClassRef.group: Invalid value: "a/b": spec.template.spec.nodeClassRef.group in body should match '^[^/]*$'`,
				`(NodePool np): spec.template.spec.nodeClassRef.kind: Invalid value: "string": kind may not be empty`,
				`(NodePool np): spec.template.spec.nodeClassRef.name: Invalid value: "string": name may not be empty`,
			},
		},
		{
			name: "durations, budgets, weight",
			doc: npHead + "  template:\n    spec:\n      requirements: []\n" + npRef + "      expireAfter: 30d\n      terminationGracePeriod: Never\n" +
				"  disruption:\n    consolidateAfter: 1 hour\n    budgets: [{nodes: \"101%\"}, {nodes: \"5\", duration: 90s}, {nodes: \"1\", reasons: [Expired]}]\n  weight: 0\n",
			want: []string{
				`(NodePool np): spec.template.spec.expireAfter: Invalid value: "30d": spec.template.spec.expireAfter in body should match '^(([0-9]+(s|m|h))+|Never)$'`,
				`(NodePool np): spec.template.spec.terminationGracePeriod: Invalid value: "Never": spec.template.spec.terminationGracePeriod in body should match '^([0-9]+(s|m|h))+$'`,
				`(NodePool np): spec.disruption.consolidateAfter: Invalid value: "1 hour": spec.disruption.consolidateAfter in body should match '^(([0-9]+(s|m|h))+|Never)$'`,
				`(NodePool np): spec.disruption.budgets[0].nodes: Invalid value: "101%": spec.disruption.budgets[0].nodes in body should match '^((100|[0-9]{1,2})%|[0-9]+)$'`,
				`(NodePool np): spec.disruption.budgets[1].duration: Invalid value: "90s": spec.disruption.budgets[1].duration in body should match '^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$'`,
				`(NodePool np): spec.disruption.budgets[2].reasons[0]: Unsupported value: "Expired": supported values: "Underutilized", "Empty", "Drifted"`,
				`(NodePool np): spec.disruption.budgets: Invalid value: "array": 'schedule' must be set with 'duration'`,
				`(NodePool np): spec.weight: Invalid value: 0: spec.weight in body should be greater than or equal to 1`,
			},
		},
		{
			name: "static nodepool",
			doc:  npGood + "  replicas: 3\n  weight: 5\n  limits: {cpu: 10}\n",
			want: []string{
				`(NodePool np): spec: Invalid value: "object": 'weight' is not supported on static NodePools`,
				`(NodePool np): spec: Invalid value: "object": only 'limits.nodes' is supported on static NodePools`,
			},
		},
		{name: "minimal ec2nodeclass", doc: ncGood},
		{
			name: "ec2nodeclass with ids, family and profile",
			doc: ncHead + "  subnetSelectorTerms: [{id: subnet-0abc}, {tags: {Name: \"*\"}}]\n  securityGroupSelectorTerms: [{name: eks-sg}]\n" +
				"  instanceProfile: P\n  amiFamily: AL2023\n  amiSelectorTerms: [{tags: {team: x}}, {id: ami-0123}]\n" +
				"  metadataOptions: {httpTokens: optional}\n  tags: {team: web}\n",
		},
		{
			name: "ec2nodeclass selectors and role",
			doc:  ncHead + "  subnetSelectorTerms: []\n  securityGroupSelectorTerms: [{id: sg-1, name: x}]\n  role: R\n  instanceProfile: P\n  amiSelectorTerms: [{alias: al2@latest}]\n  amiFamily: Bottlerocket\n",
			want: []string{
				`(EC2NodeClass nc): spec.subnetSelectorTerms: Invalid value: "array": subnetSelectorTerms cannot be empty`,
				`(EC2NodeClass nc): spec.securityGroupSelectorTerms: Invalid value: "array": 'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term`,
				`(EC2NodeClass nc): spec.securityGroupSelectorTerms: Invalid value: "array": 'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term`,
				`(EC2NodeClass nc): spec: Invalid value: "object": if set, amiFamily must be 'AL2' or 'Custom' when using an AL2 alias`,
				`(EC2NodeClass nc): spec: Invalid value: "object": must specify exactly one of ['role', 'instanceProfile']`,
			},
		},
		{
			name: "ec2nodeclass ami terms, tags, metadata",
			doc: ncHead + ncSel + "  amiSelectorTerms: [{alias: windows2022@v1}, {name: x}, {owner: me}]\n" +
				"  tags: {kubernetes.io/cluster/eks: owned}\n  metadataOptions: {httpPutResponseHopLimit: 0, httpEndpoint: bogus}\n",
			want: []string{
				`(EC2NodeClass nc): spec.amiSelectorTerms[0].alias: Invalid value: "string": windows families may only specify version 'latest'`,
				`(EC2NodeClass nc): spec.amiSelectorTerms: Invalid value: "array": 'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms`,
				`(EC2NodeClass nc): spec.amiSelectorTerms: Invalid value: "array": expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']`,
				`(EC2NodeClass nc): spec: Invalid value: "object": must specify exactly one of ['role', 'instanceProfile']`,
				`(EC2NodeClass nc): spec.tags: Invalid value: "object": tag contains a restricted tag matching kubernetes.io/cluster/`,
				`(EC2NodeClass nc): spec.metadataOptions.httpEndpoint: Unsupported value: "bogus": supported values: "enabled", "disabled"`,
				`(EC2NodeClass nc): spec.metadataOptions.httpPutResponseHopLimit: Invalid value: 0: spec.metadataOptions.httpPutResponseHopLimit in body should be greater than or equal to 1`,
			},
		},
		{
			name: "ec2nodeclass without alias needs amiFamily",
			doc:  ncHead + ncSel + "  role: R\n  amiSelectorTerms: [{id: ami-1}]\n",
			want: []string{`(EC2NodeClass nc): spec: Invalid value: "object": must specify amiFamily if amiSelectorTerms does not contain an alias`},
		},
		{
			name: "provisioner with providerRef",
			doc:  prHead + "  providerRef: {name: default}\n  ttlSecondsAfterEmpty: 30\n  requirements: [{key: beta.kubernetes.io/arch, operator: In, values: [arm64]}]\n",
		},
		{
			name: "provisioner ttl and consolidation",
			doc:  prHead + "  providerRef: {name: default}\n  ttlSecondsAfterEmpty: 30\n  consolidation: {enabled: true}\n",
			want: []string{`(Provisioner pr): ` + coreWH + `expected exactly one, got both: spec.consolidation.enabled, spec.ttlSecondsAfterEmpty`},
		},
		{
			name: "provisioner consolidation disabled with ttl is fine",
			doc:  prHead + "  providerRef: {name: default}\n  ttlSecondsAfterEmpty: 30\n  consolidation: {enabled: false}\n",
		},
		{
			name: "provisioner without provider",
			doc:  prHead + "  ttlSecondsUntilExpired: -1\n  labels: {karpenter.sh/provisioner-name: x}\n  requirements: [{key: karpenter.sh/capacity-type, operator: In}, {key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [a]}]\n",
			want: []string{
				`(Provisioner pr): ` + coreWH + `invalid value: cannot be negative: spec.ttlSecondsUntilExpired`,
				`(Provisioner pr): ` + coreWH + `expected exactly one, got neither: spec.provider, spec.providerRef`,
				`(Provisioner pr): ` + coreWH + `invalid key name "karpenter.sh/provisioner-name": spec.labels restricted`,
				`(Provisioner pr): ` + coreWH + `invalid value: key karpenter.sh/capacity-type with operator In must have a value defined: spec.requirements[0]`,
				`(Provisioner pr): ` + coreWH + `invalid value: key karpenter.k8s.aws/instance-cpu with operator Gt must have a single positive integer value: spec.requirements[1]`,
			},
		},
		{
			name: "provisioner with both providers and a bad inline one",
			doc:  prHead + "  providerRef: {name: default}\n  provider: {securityGroupSelector: {a: b}, metadataOptions: {httpTokens: maybe}}\n  weight: 0\n",
			want: []string{`(Provisioner pr): spec.weight: Invalid value: 0: spec.weight in body should be greater than or equal to 1`},
		},
		{
			name: "provisioner inline provider",
			doc:  prHead + "  provider: {securityGroupSelector: {a: b}, metadataOptions: {httpTokens: maybe}, amiFamily: AL2023}\n",
			want: []string{
				`(Provisioner pr): ` + awsWH + `missing field(s): provider.subnetSelector`,
				`(Provisioner pr): ` + awsWH + `invalid value: maybe not in optional, required: provider.metadataOptions.httpTokens`,
				`(Provisioner pr): ` + awsWH + `invalid value: AL2023 not in Bottlerocket, AL2, Ubuntu, Windows2019, Windows2022, Custom: provider.amiFamily`,
			},
		},
		{name: "awsnodetemplate", doc: ntHead + "  subnetSelector: {a: b}\n  securityGroupSelector: {aws-ids: sg-1}\n  amiFamily: Bottlerocket\n"},
		{
			name: "awsnodetemplate problems",
			doc:  ntHead + "  subnetSelector: {aws-ids: \"subnet-1,vpc-2\"}\n  amiFamily: Custom\n",
			want: []string{
				`(AWSNodeTemplate nt): ` + awsWH + `invalid value: "vpc-2": spec.provider.subnetSelector['aws-ids'] must be a valid subnet-id (regex: subnet-[0-9a-z]+)`,
				`(AWSNodeTemplate nt): ` + awsWH + `missing field(s): spec.provider.securityGroupSelector`,
				`(AWSNodeTemplate nt): ` + awsWH + `missing field(s): spec.amiSelector`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Decode("v.yaml", []byte(tt.doc))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			var got []string
			if err := Validate(objs[0]); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if want := prefix + tt.want[i]; got[i] != want {
					t.Errorf("error %d\n  got  %s\n  want %s", i, got[i], want)
				}
			}
		})
	}
}

// Unknown fields are refused as for every other kind, including inside an
// inline v1alpha5 provider.
func TestDecodeKarpenterStrict(t *testing.T) {
	for doc, want := range map[string]string{
		npHead + "  template:\n    spec:\n      nodeClassref: {}\n":               `v.yaml:1: document 1 (NodePool np): strict decoding error: unknown field "spec.template.spec.nodeClassref"`,
		prHead + "  provider: {subnetSelectors: {a: b}}\n":                        `v.yaml:1: document 1 (Provisioner pr): strict decoding error: unknown field "spec.provider.subnetSelectors"`,
		"apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: c}\n":     `v.yaml:1: document 1 (NodeClaim c): berth does not model kind "NodeClaim" (karpenter.sh/v1) yet`,
		"apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: c}\n": `v.yaml:1: document 1 (NodePool c): no matches for kind "NodePool" in version "karpenter.sh/v1beta1"`,
	} {
		_, err := Decode("v.yaml", []byte(doc))
		if err == nil || err.Error() != want {
			t.Errorf("Decode(%q)\n  got  %v\n  want %s", doc, err, want)
		}
	}
}
