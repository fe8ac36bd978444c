//go:build genuine

package genuine

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	ca_context "k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"k8s.io/autoscaler/cluster-autoscaler/utils/errors"
)

// maxBalancePermuted is the most groups (the chosen one and its similar
// ones) for which every order is tried; 7 groups are 720 orders of a cheap
// computation. Larger sets (only
// the benchmark shape has them) are balanced in the order given.
const maxBalancePermuted = 7

// balancer is the shipped balancing processor, with the one thing chance
// decides in it made a choice. The orchestrator hands it the chosen group
// and then its similar groups in the cloud provider's order, which comes
// out of a Go map; the processor sorts them by current size with an
// unstable sort, so among groups of equal size which one gets the odd
// node, and the order of the resulting list (the order of the
// TriggeredScaleUp message and of the quota caps applied after), follows
// that order. balancer runs the genuine BalanceScaleUpBetweenGroups on
// every order of the similar groups after the chosen one, keeps the distinct answers and returns the
// preferred one when it is among them — the one whose text is prefer
// (the TriggeredScaleUp list, order included), else one with the same
// sizes in another order — else the first by text (README, "Ties").
type balancer struct {
	*nodegroupset.BalancingNodeGroupSetProcessor
	prefer string
	// alternatives is how many distinct answers the last call had.
	alternatives int
}

func (b *balancer) BalanceScaleUpBetweenGroups(actx *ca_context.AutoscalingContext, groups []cloudprovider.NodeGroup, newNodes int) ([]nodegroupset.ScaleUpInfo, errors.AutoscalerError) {
	b.alternatives = 1
	if len(groups) < 2 || len(groups) > maxBalancePermuted {
		return b.BalancingNodeGroupSetProcessor.BalanceScaleUpBetweenGroups(actx, groups, newNodes)
	}
	answers := map[string][]nodegroupset.ScaleUpInfo{}
	var firstErr errors.AutoscalerError
	// The chosen group always comes first; only its similar groups are
	// in map order.
	permute(append([]cloudprovider.NodeGroup(nil), groups...), 1, func(order []cloudprovider.NodeGroup) {
		infos, err := b.BalancingNodeGroupSetProcessor.BalanceScaleUpBetweenGroups(actx, append([]cloudprovider.NodeGroup(nil), order...), newNodes)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return
		}
		answers[balanceKey(infos)] = infos
	})
	if firstErr != nil {
		return nil, firstErr
	}
	keys := make([]string, 0, len(answers))
	for k := range answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.alternatives = len(keys)
	if _, ok := answers[b.prefer]; ok {
		return answers[b.prefer], nil
	}
	for _, k := range keys {
		if sameSplit(k, b.prefer) {
			return answers[k], nil
		}
	}
	return answers[keys[0]], nil
}

// balanceKey is the split as the TriggeredScaleUp message lists it.
func balanceKey(infos []nodegroupset.ScaleUpInfo) string {
	var parts []string
	for _, i := range infos {
		parts = append(parts, i.String())
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// sameSplit compares two balanceKeys ignoring the order of the groups.
func sameSplit(a, b string) bool {
	split := func(s string) []string {
		f := strings.Split(strings.Trim(s, "[]"), "} {")
		sort.Strings(f)
		return f
	}
	return fmt.Sprint(split(a)) == fmt.Sprint(split(b))
}

// permute calls f with every order of g[k:] after g[:k].
func permute(g []cloudprovider.NodeGroup, k int, f func([]cloudprovider.NodeGroup)) {
	if k == len(g) {
		f(g)
		return
	}
	for i := k; i < len(g); i++ {
		g[k], g[i] = g[i], g[k]
		permute(g, k+1, f)
		g[k], g[i] = g[i], g[k]
	}
}
