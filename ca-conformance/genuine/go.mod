// Opt-in: the genuine cluster-autoscaler runner. Its sources need the
// "genuine" build tag and a module file that run.sh writes in a temporary
// directory (it points k8s.io/autoscaler/cluster-autoscaler at a local source
// tree, which the module proxy does not serve). Without the tag this module
// has no packages, so nothing here builds or runs by default.
module github.com/berth-sim/berth/ca-conformance/genuine

go 1.26.0
