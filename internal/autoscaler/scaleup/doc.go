// Package scaleup is cluster-autoscaler's scale-up decision, callable on
// plain inputs (the differential harness in ca-conformance uses it that way):
//
//	res, err := scaleup.Plan(scaleup.Input{
//		Nodes: nodes, Pods: boundPods, Pending: unschedulable,
//		Groups: []scaleup.Group{{Name, MinSize, MaxSize, Target, Registered, Template, TemplatePods}},
//		Options: config.Defaults(), Seed: 1,
//	})
//
// res.Increases are the per-group new sizes ({group from->to (max: n)}),
// res.Triggered the pods that get TriggeredScaleUp, and res.NoScaleUp the
// per-pod aggregated reasons of NotTriggerScaleUp (filled only when nothing
// scales up, as upstream). Steps: expendable pods dropped; pods that fit an
// existing or upcoming node (Target-Registered template copies) set aside;
// groups skipped (backoff, max size, resource limits); each equivalence
// group (owner + spec) checked against the template with berth's scheduler
// Filter; binpacking estimator; expander chain with a seeded random
// tie-break; balance-similar split. berth's controller passes Input.State
// instead of Nodes/Pods. scaledown.Candidates is the scale-down counterpart.
package scaleup
