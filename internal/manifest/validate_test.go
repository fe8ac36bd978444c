package manifest

import (
	"strings"
	"testing"
)

const (
	podHead = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
	ctr     = "  containers: [{name: c, image: nginx}]\n"
	// deployHead opens a Deployment whose selector and template agree.
	deployHead = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ui, namespace: ui}\nspec:\n"
	prefix     = "v.yaml:1: document 1 "
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // exact lines, without the shared prefix; empty means valid
	}{
		{
			name: "valid pod without a namespace",
			doc:  podHead + ctr + "  nodeSelector: {kubernetes.io/arch: arm64}\n  tolerations: [{key: frontend, operator: Exists, effect: NoExecute}]\n",
		},
		{
			name: "invalid name and labels",
			doc:  "apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name, labels: {\"a b\": x, ok: \"not ok!\"}}\nspec:\n" + ctr,
			want: []string{
				`(Pod Bad_Name): metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				`(Pod Bad_Name): metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				`(Pod Bad_Name): metadata.labels: Invalid value: "not ok!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
			},
		},
		{
			name: "service names are DNS-1035 labels",
			doc:  "apiVersion: v1\nkind: Service\nmetadata: {name: 1st}\n",
			want: []string{`(Service 1st): metadata.name: Invalid value: "1st": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`},
		},
		{
			name: "tolerations",
			doc: podHead + ctr + "  tolerations:\n" +
				"  - {key: frontend, operator: Exists, value: \"true\", effect: NoExecute}\n" +
				"  - {key: k, operator: Like, value: v}\n" +
				"  - {operator: Equal, value: v}\n" +
				"  - {key: k, effect: Sometimes}\n" +
				"  - {key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}\n",
			want: []string{
				`(Pod p): spec.tolerations[0].operator: Invalid value: {"key":"frontend","operator":"Exists","value":"true","effect":"NoExecute"}: value must be empty when ` + "`operator`" + ` is 'Exists'`,
				`(Pod p): spec.tolerations[1].operator: Unsupported value: "Like": supported values: "Equal", "Exists"`,
				`(Pod p): spec.tolerations[2].operator: Invalid value: "Equal": operator must be Exists when ` + "`key`" + ` is empty, which means "match all values and all keys"`,
				`(Pod p): spec.tolerations[3].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
				`(Pod p): spec.tolerations[4].effect: Invalid value: "NoSchedule": effect must be 'NoExecute' when ` + "`tolerationSeconds`" + ` is set`,
			},
		},
		{
			name: "node taints",
			doc: "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints:\n" +
				"  - {key: a, value: \"1\", effect: Sometimes}\n" +
				"  - {key: b}\n" +
				"  - {key: c, effect: NoSchedule}\n" +
				"  - {key: c, value: other, effect: NoSchedule}\n",
			want: []string{
				`(Node n1): spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
				`(Node n1): spec.taints[1].effect: Required value`,
				`(Node n1): spec.taints[3]: Duplicate value: {"key":"c","value":"other","effect":"NoSchedule"}: taints must be unique by key and effect pair`,
			},
		},
		{
			name: "selector does not match template, negative replicas",
			doc: deployHead + "  replicas: -1\n  selector: {matchLabels: {app: ui}}\n" +
				"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: ui, image: x}]\n",
			want: []string{
				`(Deployment ui/ui): spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
				`(Deployment ui/ui): spec.template.metadata.labels: Invalid value: {"app":"web"}: ` + "`selector` does not match template `labels`",
			},
		},
		{
			name: "missing selector, containers without name or image, duplicate names, quantities",
			doc: "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec:\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n" +
				"      - {name: a}\n      - {image: nginx}\n" +
				"      - {name: a, image: z, resources: {requests: {cpu: \"-1\", memory: 2Gi}, limits: {memory: 1Gi}}}\n",
			want: []string{
				`(ReplicaSet rs): spec.selector: Required value`,
				// Upstream compares with labels.Nothing() when the selector is missing.
				`(ReplicaSet rs): spec.template.metadata.labels: Invalid value: {"app":"web"}: ` + "`selector` does not match template `labels`",
				`(ReplicaSet rs): spec.template.spec.containers[0].image: Required value`,
				`(ReplicaSet rs): spec.template.spec.containers[1].name: Required value`,
				`(ReplicaSet rs): spec.template.spec.containers[2].name: Duplicate value: "a"`,
				`(ReplicaSet rs): spec.template.spec.containers[2].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
				`(ReplicaSet rs): spec.template.spec.containers[2].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`,
			},
		},
		{
			name: "empty selector, bad strategy and restart policy",
			doc: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {}\n" +
				"  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}\n" +
				"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: x}]\n",
			want: []string{
				`(Deployment d): spec.selector: Invalid value: {}: empty selector is invalid for deployment`,
				`(Deployment d): spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`,
				`(Deployment d): spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when ` + "`maxSurge`" + ` is 0`,
			},
		},
		{
			name: "invalid selector operator in a Deployment",
			doc: deployHead + "  selector:\n    matchExpressions: [{key: app, operator: Near, values: [ui]}]\n" +
				"  template:\n    metadata: {labels: {app: ui}}\n    spec:\n      containers: [{name: ui, image: x}]\n",
			want: []string{
				`(Deployment ui/ui): spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`,
				`(Deployment ui/ui): spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"Near","values":["ui"]}]}: invalid label selector`,
			},
		},
		{
			name: "affinity and topology spread",
			doc: podHead + ctr + "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n" +
				"        - matchExpressions:\n          - {key: kubernetes.io/arch, operator: In}\n          - {key: zone, operator: Near, values: [a]}\n" +
				"    podAntiAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n" +
				"      - weight: 500\n        podAffinityTerm: {labelSelector: {matchLabels: {app: web}}}\n" +
				"  topologySpreadConstraints:\n  - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: Maybe}\n",
			want: []string{
				"(Pod p): spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
				`(Pod p): spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].operator: Invalid value: "Near": not a valid selector operator`,
				`(Pod p): spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 500: must be in the range 1-100`,
				`(Pod p): spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey: Required value: can not be empty`,
				`(Pod p): spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero`,
				`(Pod p): spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"`,
			},
		},
		{
			name: "pod without containers",
			doc:  podHead + "  nodeSelector: {\"bad key!\": x}\n",
			want: []string{
				`(Pod p): spec.containers: Required value`,
				`(Pod p): spec.nodeSelector: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			},
		},
		{
			name: "config map keys",
			doc:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {\"bad key\": v, good: v}\n",
			want: []string{`(ConfigMap cm): data: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`},
		},
		{
			name: "priority class preemption policy",
			doc:  "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10\npreemptionPolicy: Sometimes\n",
			want: []string{`(PriorityClass high): preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"`},
		},
		{
			name: "cluster config goes through eksctl's rules",
			doc:  "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: us-west-2}\nmanagedNodeGroups: [{name: a, minSize: 3, desiredCapacity: 1}]\n",
			want: []string{`(ClusterConfig c): managedNodeGroups[0]: cannot use --nodes-min=3 and --nodes=1 at the same time (eksctl names its flags here: --nodes-min is minSize, --nodes-max is maxSize, --nodes is desiredCapacity)`},
		},
		{
			name: "cluster config taint effect spellings",
			doc: "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: us-west-2}\n" +
				"managedNodeGroups: [{name: a, taints: [{key: k, value: v, effect: NO_EXECUTE}]}]\n" +
				"nodeGroups: [{name: b, taints: {k: \"v:PreferNoSchedule\"}}]\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Decode("v.yaml", []byte(tt.doc))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if len(objs) != 1 {
				t.Fatalf("decoded %d objects, want 1", len(objs))
			}
			err = Validate(objs[0])
			var got []string
			if err != nil {
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
