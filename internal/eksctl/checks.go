package eksctl

import (
	"fmt"
	"strings"

	"github.com/berth-sim/berth/internal/aws"
)

// supportedRegions is eksctl's SupportedRegions() (eksctl main, Aug 2026),
// in its order, which its error message keeps.
var supportedRegions = []string{
	"us-west-1", "us-west-2", "us-east-1", "us-east-2", "ca-central-1", "ca-west-1", "eu-west-1", "eu-west-2",
	"eu-west-3", "eu-north-1", "eu-central-1", "eu-central-2", "eu-south-1", "eu-south-2", "ap-northeast-1",
	"ap-northeast-2", "ap-northeast-3", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4",
	"ap-southeast-5", "ap-southeast-7", "ap-south-1", "ap-south-2", "ap-east-1", "ap-east-2", "me-central-1",
	"me-south-1", "sa-east-1", "af-south-1", "cn-northwest-1", "cn-north-1", "il-central-1", "us-gov-west-1",
	"us-gov-east-1", "us-iso-east-1", "us-isob-east-1", "us-isob-west-1", "us-iso-west-1", "mx-central-1",
	"ap-southeast-6", "us-isof-south-1", "us-isof-east-1", "eu-isoe-west-1",
}

// checkRegion is eksctl's ErrUnsupportedRegion (pkg/ctl/cmdutils): eksctl
// says --region even when the region came from metadata.region.
func checkRegion(region string) error {
	for _, r := range supportedRegions {
		if r == region {
			return nil
		}
	}
	return fmt.Errorf("metadata.region: --region=%s is not supported - use one of: %s", region, strings.Join(supportedRegions, ", "))
}

// checkZones refuses zones that are not in the cluster's region. eksctl
// leaves this to EC2 and CloudFormation, which fail late; berth's text.
func checkZones(path string, zones []string, region string) error {
	for i, z := range zones {
		if aws.RegionOfZone(z) != region || z == region {
			return fmt.Errorf("%s[%d]: %q is not an availability zone of region %q (metadata.region)", path, i, z, region)
		}
	}
	return nil
}

// amiTypeSlots says which kinds of instance an AMI family has an AMI type
// for, following eksctl's GetAMIType table (pkg/apis/eksctl.io/v1alpha5/
// amitype.go). Families missing here (Ubuntu) map to a custom AMI and are
// not checked, as in eksctl.
type amiTypeSlots struct{ x86, x86Nvidia, x86Neuron, arm, armNvidia, armNeuron bool }

var amiTypesByFamily = func() map[string]amiTypeSlots {
	windows := amiTypeSlots{x86: true, x86Nvidia: true}
	m := map[string]amiTypeSlots{
		"AmazonLinux2023":  {x86: true, x86Nvidia: true, x86Neuron: true, arm: true, armNvidia: true},
		"AmazonLinux2":     {x86: true, x86Nvidia: true, x86Neuron: true, arm: true},
		"Bottlerocket":     {x86: true, x86Nvidia: true, x86Neuron: true, arm: true, armNvidia: true, armNeuron: true},
		"BottlerocketFips": {x86: true, x86Nvidia: true, x86Neuron: true, arm: true, armNvidia: true, armNeuron: true},
	}
	for _, f := range []string{"WindowsServer2019FullContainer", "WindowsServer2019CoreContainer", "WindowsServer2022FullContainer",
		"WindowsServer2022CoreContainer", "WindowsServer2025FullContainer", "WindowsServer2025CoreContainer"} {
		m[f] = windows
	}
	return m
}()

// checkAMIFamily refuses an instance type the family has no AMI for. eksctl
// looks strictly for self-managed groups (validateInstanceTypeSupport, whose
// text this is); managed groups fall back from the GPU and Neuron AMI types
// to the plain one, so only a missing architecture fails (berth's text,
// modelled on eksctl's). Unknown instance types are reported elsewhere.
func checkAMIFamily(path, family, instanceType string, managed bool) error {
	slots, ok := amiTypesByFamily[family]
	it, known := aws.Lookup(instanceType)
	if !ok || !known {
		return nil
	}
	nvidia := it.IsNVIDIAGPU()
	neuron := strings.HasPrefix(it.AcceleratorName, "inferentia") || strings.HasPrefix(it.AcceleratorName, "trainium")
	var have bool
	switch arm := it.Arch == "arm64"; {
	case managed && arm:
		have = slots.arm
	case managed:
		have = slots.x86
	case arm && nvidia:
		have = slots.armNvidia
	case arm && neuron:
		have = slots.armNeuron
	case arm:
		have = slots.arm
	case nvidia:
		have = slots.x86Nvidia
	case neuron:
		have = slots.x86Neuron
	default:
		have = slots.x86
	}
	if have {
		return nil
	}
	kind := "unmanaged"
	if managed {
		kind = "managed"
	}
	return fmt.Errorf("%s: %s instance types are not supported for %s nodegroups with AMIFamily %s", path, instanceType, kind, family)
}

// checkNotNegative refuses negative sizes before eksctl's rules derive the
// others from them (EKS and EC2 Auto Scaling take only sizes >= 0; berth's
// text, naming the config field rather than an eksctl flag).
func checkNotNegative(path string, sizes ...namedSize) error {
	for _, s := range sizes {
		if s.value != nil && *s.value < 0 {
			return fmt.Errorf("%s.%s: %d: must be 0 or more", path, s.field, *s.value)
		}
	}
	return nil
}

// namedSize is a node-group size with its config field name.
type namedSize struct {
	field string
	value *int
}
