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

// maxBalancePermuted is the most similar groups whose every order is
// tried; 6 groups are 720 orders of a cheap computation. Larger sets (only
// the benchmark shape has them) are balanced in the order given.
const maxBalancePermuted = 6

// balancer is the shipped balancing processor, with the one thing chance
// decides in it made a choice. The orchestrator hands it the chosen group
// and then its similar groups in the cloud provider's order, which comes
// out of a Go map; the processor sorts them by current size with an
// unstable sort, so among groups of equal size which one gets the odd
// node, and the order of the resulting list (the order of the
// TriggeredScaleUp message and of the quota caps applied after), follows
// that order. balancer runs the genuine BalanceScaleUpBetweenGroups on
// every order of the groups, keeps the distinct answers (sorted by their
// text, so an index names the same answer run after run) and returns the
// pick-th (README, "Ties").
type balancer struct {
	*nodegroupset.BalancingNodeGroupSetProcessor
	pick int
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
	permute(append([]cloudprovider.NodeGroup(nil), groups...), 0, func(order []cloudprovider.NodeGroup) {
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
	return answers[keys[b.pick%len(keys)]], nil
}

func balanceKey(infos []nodegroupset.ScaleUpInfo) string {
	var parts []string
	for _, i := range infos {
		parts = append(parts, fmt.Sprintf("%s:%d->%d", i.Group.Id(), i.CurrentSize, i.NewSize))
	}
	return strings.Join(parts, " ")
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
