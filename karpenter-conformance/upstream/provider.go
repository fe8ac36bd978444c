package upstream

import (
	"context"
	"fmt"

	"github.com/awslabs/operatorpkg/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// EC2NodeClassGroupVersion is the AWS provider's node class API; pools
// referring to karpenter.k8s.aws/EC2NodeClass are the ones this provider manages.
var EC2NodeClassGroupVersion = schema.GroupVersion{Group: "karpenter.k8s.aws", Version: "v1"}

// EC2NodeClass stands in for the AWS provider's node class: the provisioner
// only needs its GroupKind (to decide which pools are managed), never its spec.
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            struct {
		Conditions []status.Condition `json:"conditions,omitempty"`
	} `json:"status,omitempty"`
}

func (n *EC2NodeClass) DeepCopyObject() runtime.Object {
	out := *n
	n.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = append([]status.Condition(nil), n.Status.Conditions...)
	return &out
}
func (n *EC2NodeClass) StatusConditions() status.ConditionSet {
	return status.NewReadyConditions().For(n)
}
func (n *EC2NodeClass) GetConditions() []status.Condition  { return n.Status.Conditions }
func (n *EC2NodeClass) SetConditions(c []status.Condition) { n.Status.Conditions = c }

func init() {
	// operatorpkg's object.GVK resolves the node class through client-go's scheme.
	scheme.Scheme.AddKnownTypes(EC2NodeClassGroupVersion, &EC2NodeClass{})
	metav1.AddToGroupVersion(scheme.Scheme, EC2NodeClassGroupVersion)
}

// provider is the fake cloud provider: every pool resolves to the same
// catalog instance types. Only GetInstanceTypes and GetSupportedNodeClasses
// are reached by provisioning; the rest refuse.
type provider struct {
	instanceTypes []*cloudprovider.InstanceType
}

var _ cloudprovider.CloudProvider = (*provider)(nil)

func (p *provider) GetInstanceTypes(context.Context, *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	return p.instanceTypes, nil
}
func (p *provider) GetSupportedNodeClasses() []status.Object { return []status.Object{&EC2NodeClass{}} }
func (p *provider) Name() string                             { return "berth-catalog" }
func (p *provider) RepairPolicies() []cloudprovider.RepairPolicy {
	return nil
}
func (p *provider) Create(context.Context, *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	return nil, fmt.Errorf("berth-catalog provider does not launch")
}
func (p *provider) Delete(context.Context, *karpv1.NodeClaim) error {
	return fmt.Errorf("berth-catalog provider does not delete")
}
func (p *provider) Get(_ context.Context, id string) (*karpv1.NodeClaim, error) {
	return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("no instance %s", id))
}
func (p *provider) List(context.Context) ([]*karpv1.NodeClaim, error) { return nil, nil }
func (p *provider) IsDrifted(context.Context, *karpv1.NodeClaim) (cloudprovider.DriftReason, error) {
	return "", nil
}
