// Package apis holds berth's own copies of Karpenter's API types (see
// docs/karpenter-apis.md): karpenter.sh/v1 and karpenter.k8s.aws/v1 in
// package v1, the legacy karpenter.sh/v1alpha5 and karpenter.k8s.aws/v1alpha1
// in package v1alpha5. They are written by hand so that the main module does
// not depend on sigs.k8s.io/karpenter or the AWS SDK; JSON names match the
// upstream CRDs so the same YAML round-trips.
package apis

import (
	"encoding/json"
	"fmt"
)

// JSONCopy deep-copies in into a new value with a JSON round trip. The types
// here are plain data whose JSON form is exact (as eksctl.ClusterConfig's
// DeepCopyObject relies on too), so the copy is exact; it is slower than
// generated code, which does not matter for a handful of objects.
func JSONCopy[T any](in *T) *T {
	if in == nil {
		return nil
	}
	data, err := json.Marshal(in)
	if err != nil {
		panic(fmt.Sprintf("karpenter apis: cannot copy %T: %v", in, err))
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		panic(fmt.Sprintf("karpenter apis: cannot copy %T: %v", in, err))
	}
	return out
}
