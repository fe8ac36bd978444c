package view

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/fargate"
)

// describeFargateNode adds berth's Fargate section to `describe node` for a
// Fargate node: the size its pod was given (the pod's CapacityProvisioned
// annotation, which is what AWS bills) and its hourly price in the
// cluster's region (docs/fargate.md#pricing). kubectl has no such section;
// it comes after ProviderID so that everything kubectl prints keeps its
// place.
func describeFargateNode(s *cluster.State, node *corev1.Node, pods []*corev1.Pod, w prefixWriter) {
	if !fargate.IsFargateNode(node) {
		return
	}
	var size fargate.Size
	found := false
	for _, p := range pods {
		if z, ok := fargate.ParseSize(p.Annotations[fargate.AnnotationCapacityProvisioned]); ok {
			size, found = z, true
			break
		}
	}
	w.write(level0, "Fargate:\n")
	if !found {
		w.write(level1, "Capacity Provisioned:\t%s\n", "<none>")
		return
	}
	w.write(level1, "Capacity Provisioned:\t%s\n", size)
	region := node.Labels[corev1.LabelTopologyRegion]
	if region == "" {
		region = aws.Region(s.Info)
	}
	price, rate, ok := fargate.HourlyPrice(region, size)
	if !ok {
		w.write(level1, "Price:\t%s\n", "<unknown> (berth has no Fargate rate for "+region+")")
		return
	}
	w.write(level1, "Price:\t$%s/hour (%s: $%s per vCPU-hour, $%s per GB-hour; %s as of %s)\n",
		price, region, rate.PerVCPUHour, rate.PerGBHour, "AWS Fargate pricing", fargate.PriceDate)
}
