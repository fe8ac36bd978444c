package scheduler

import "k8s.io/apimachinery/pkg/api/resource"

func resourceQty(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}
