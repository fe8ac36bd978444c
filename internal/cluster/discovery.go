package cluster

import (
	"sort"
	"strings"
)

// KindList is a set of kinds as API discovery serves them: what resource
// names resolve to and what categories expand to.
type KindList []*Kind

// served is every kind the API serves: the stored kinds and events.
var served = append(Kinds[:len(Kinds):len(Kinds)], EventKind)

// ServedKinds returns every kind the API serves (Kinds and EventKind).
func ServedKinds() KindList { return served }

// KindForResource resolves a resource name the way kubectl does: plural,
// singular or short name, case-insensitively, optionally qualified with the
// group ("deployments.apps", "deploy.apps"). Nil when nothing matches.
func KindForResource(name string) *Kind { return served.ForResource(name) }

// ForResource is KindForResource over the kinds in l.
func (l KindList) ForResource(name string) *Kind {
	n := strings.ToLower(name)
	for _, k := range l {
		if k.isNamed(n) {
			return k
		}
		if g := k.GVK.Group; g != "" && strings.HasSuffix(n, "."+g) && k.isNamed(strings.TrimSuffix(n, "."+g)) {
			return k
		}
	}
	return nil
}

func (k *Kind) isNamed(n string) bool {
	if n == k.Resource || n == k.SingularName() {
		return true
	}
	for _, s := range k.ShortNames {
		if n == s {
			return true
		}
	}
	return false
}

// discoveryGroups is the order the API server lists the groups berth serves
// (kube-aggregator's group priorities); other groups, such as CRDs', come
// after them by name. Within a group, resources are listed by name.
var discoveryGroups = []string{"", "apps", "batch", "policy", "storage.k8s.io", "scheduling.k8s.io"}

func groupRank(group string) int {
	for i, g := range discoveryGroups {
		if g == group {
			return i
		}
	}
	return len(discoveryGroups)
}

// InCategory returns the kinds in category c in discovery order, which is
// the order kubectl prints `get all` in.
func (l KindList) InCategory(c string) []*Kind {
	var out []*Kind
	for _, k := range l {
		if k.InCategory(c) {
			out = append(out, k)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ra, rb := groupRank(a.GVK.Group), groupRank(b.GVK.Group); ra != rb {
			return ra < rb
		}
		if a.GVK.Group != b.GVK.Group {
			return a.GVK.Group < b.GVK.Group
		}
		return a.Resource < b.Resource
	})
	return out
}
