package view

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestDescribeNodeLease(t *testing.T) {
	holder := "n1"
	// A stored lease's times are in the local zone once loaded (TZ); the
	// block prints them as they are, like every other describe timestamp.
	tokyo := time.FixedZone("JST", 9*3600)
	renewed := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
		HolderIdentity: &holder,
		RenewTime:      &metav1.MicroTime{Time: cluster.Epoch.Add(70 * time.Second).In(tokyo)},
	}}
	for _, tc := range []struct {
		name  string
		lease *coordinationv1.Lease
		want  string
	}{
		{"no lease", nil, "Lease:\n  HolderIdentity:  <unset>\n  AcquireTime:     <unset>\n  RenewTime:       <unset>\n"},
		{"renewed", renewed, "Lease:\n  HolderIdentity:  n1\n  AcquireTime:     <unset>\n  RenewTime:       Thu, 01 Jan 2026 09:01:10 +0900\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tabbedString(func(w prefixWriter) { describeNodeLease(w, tc.lease) })
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestLeaseRow(t *testing.T) {
	s := cluster.New("", 1)
	s.Now = cluster.Epoch.Add(90 * time.Minute)
	holder := "n1"
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: "kube-node-lease", CreationTimestamp: metav1.NewTime(cluster.Epoch)},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}
	r := leaseRow(s, l)
	if len(r.Cells) != 3 || r.Cells[0] != "n1" || r.Cells[1] != "n1" {
		t.Errorf("row = %v", r.Cells)
	}
	l.Spec.HolderIdentity = nil
	if r := leaseRow(s, l); r.Cells[1] != "" {
		t.Errorf("no holder: %v", r.Cells)
	}
}
