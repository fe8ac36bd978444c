package eksctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// eksctl reads a config file with sigs.k8s.io/yaml's UnmarshalStrict into
// its full ClusterConfig type (pkg/eks/api.go ParseConfig), so a key it does
// not know is an error, not a silently dropped setting. berth decodes only
// the part it models, so it checks keys against the names eksctl's types
// declare (eksctl main, Aug 2026, pkg/apis/eksctl.io/v1alpha5). Objects
// berth does not model (iam, ssh, updateConfig, ...) are not descended into.

var nodeGroupBaseFields = []string{
	"name", "amiFamily", "instanceType", "availabilityZones", "subnets", "instancePrefix", "instanceName",
	"volumeSize", "ssh", "labels", "privateNetworking", "tags", "iam", "ami", "securityGroups", "maxPodsPerNode",
	"asgSuspendProcesses", "ebsOptimized", "volumeType", "volumeName", "volumeEncrypted", "volumeKmsKeyID",
	"volumeIOPS", "volumeThroughput", "additionalVolumes", "preBootstrapCommands", "overrideBootstrapCommand",
	"propagateASGTags", "disableIMDSv1", "disablePodIMDS", "placement", "efaEnabled", "instanceSelector",
	"bottlerocket", "enableDetailedMonitoring", "capacityReservation", "instanceMarketOptions", "outpostARN",
	"desiredCapacity", "minSize", "maxSize",
}

// keySchema is the set of keys an object may have and, for the keys berth
// models further, the schema of their value (of each element, for lists).
type keySchema struct {
	fields   []string
	children map[string]*keySchema
	// listOnly skips a value that is an object (the taints map form, whose
	// keys are taint keys).
	listOnly bool
}

var taintSchema = &keySchema{fields: []string{"key", "value", "effect"}, listOnly: true}

var clusterConfigSchema = &keySchema{
	fields: []string{
		"apiVersion", "kind", "metadata", "upgradePolicy", "kubernetesNetworkConfig", "autoModeConfig",
		"remoteNetworkConfig", "iam", "iamIdentityMappings", "identityProviders", "accessConfig", "vpc", "addons",
		"addonsConfig", "privateCluster", "nodeGroups", "managedNodeGroups", "fargateProfiles", "availabilityZones",
		"localZones", "cloudWatch", "secretsEncryption", "gitops", "karpenter", "outpost",
		"controlPlaneScalingConfig", "zonalShiftConfig", "kubeAPIServerConfig", "kubeSchedulerConfig",
		"kubeControllerManagerConfig", "capabilities",
	},
	children: map[string]*keySchema{
		"metadata": {fields: []string{"name", "region", "version", "forceUpdateVersion", "rollbackConfig", "tags", "annotations"}},
		"vpc": {fields: []string{
			"id", "cidr", "ipv6Cidr", "ipv6Pool", "securityGroup", "subnets", "hostnameType", "extraCIDRs",
			"extraIPv6CIDRs", "sharedNodeSecurityGroup", "manageSharedNodeSecurityGroupRules", "autoAllocateIPv6",
			"nat", "clusterEndpoints", "publicAccessCIDRs", "controlPlaneSubnetIDs", "controlPlaneOnPrivateSubnets",
			"controlPlaneSecurityGroupIDs", "controlPlaneEgressMode",
		}},
		"addons": {fields: []string{
			"name", "version", "serviceAccountRoleARN", "attachPolicyARNs", "attachPolicy", "permissionsBoundary",
			"wellKnownPolicies", "tags", "resolveConflicts", "podIdentityAssociations",
			"useDefaultPodIdentityAssociations", "configurationValues", "namespaceConfig",
		}},
		"addonsConfig": {fields: []string{"autoApplyPodIdentityAssociations", "disableDefaultAddons"}},
		"fargateProfiles": {
			fields:   []string{"name", "podExecutionRoleARN", "selectors", "subnets", "tags", "status"},
			children: map[string]*keySchema{"selectors": {fields: []string{"namespace", "labels"}}},
		},
		"managedNodeGroups": {
			fields:   append(append([]string(nil), nodeGroupBaseFields...), "instanceTypes", "spot", "taints", "updateConfig", "launchTemplate", "releaseVersion", "nodeRepairConfig"),
			children: map[string]*keySchema{"taints": taintSchema},
		},
		"nodeGroups": {
			fields: append(append([]string(nil), nodeGroupBaseFields...), "instancesDistribution", "asgMetricsCollection", "cpuCredits",
				"classicLoadBalancerNames", "targetGroupARNs", "taints", "updateConfig", "clusterDNS", "kubeletExtraConfig",
				"containerRuntime", "maxInstanceLifetime", "localZones", "enclaveEnabled"),
			children: map[string]*keySchema{
				"taints": taintSchema,
				"instancesDistribution": {fields: []string{"instanceTypes", "maxPrice", "onDemandBaseCapacity",
					"onDemandPercentageAboveBaseCapacity", "spotInstancePools", "spotAllocationStrategy", "capacityRebalance"}},
			},
		},
	},
}

// UnknownFieldError is eksctl's strict-decoding error, with the path of the
// object that holds the key (managedNodeGroups[1]) added.
type UnknownFieldError struct {
	Path, Field, Hint string
}

func (e *UnknownFieldError) Error() string {
	path := e.Field
	if e.Path != "" {
		path = e.Path + "." + e.Field
	}
	msg := fmt.Sprintf("%s: error unmarshaling JSON: while decoding JSON: json: unknown field %q", path, e.Field)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// checkKnownFields reports the first unknown key of data (JSON from
// sigs.k8s.io/yaml, so keys are in sorted order, as eksctl sees them).
func checkKnownFields(data []byte) error {
	return walk(json.RawMessage(data), clusterConfigSchema, "")
}

func walk(raw json.RawMessage, s *keySchema, path string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil // the typed decode reports the shape error
		}
		for i, it := range items {
			if err := walk(it, s, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case '{':
		if s.listOnly && !strings.HasSuffix(path, "]") {
			return nil
		}
	default:
		return nil
	}
	keys, values, err := orderedObject(raw)
	if err != nil {
		return nil
	}
	for i, k := range keys {
		if !contains(s.fields, k) {
			return &UnknownFieldError{Path: path, Field: k, Hint: hint(path, k, s.fields)}
		}
		if child := s.children[k]; child != nil {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if err := walk(values[i], child, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// orderedObject returns an object's keys in document order with their values.
func orderedObject(raw []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, values = append(keys, k), append(values, v)
	}
	return keys, values, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hint suggests the field the user probably meant (berth's addition).
func hint(path, field string, known []string) string {
	if strings.HasPrefix(path, "nodeGroups[") && (field == "instanceTypes" || field == "spot") {
		return "self-managed nodeGroups take instance types and Spot through instancesDistribution"
	}
	best, bestDist := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(field), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("did you mean %q?", best)
}

// editDistance is the Levenshtein distance.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
