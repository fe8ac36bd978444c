package app

import "testing"

// TestDeleteGracePeriod checks kubectl delete's --grace-period/--force rules.
func TestDeleteGracePeriod(t *testing.T) {
	cases := []struct {
		grace   int
		force   bool
		want    int64 // -1: the pod's own
		wantErr bool
	}{
		{grace: -1, want: -1}, // also what an unset flag (nil) means
		{grace: 10, want: 10},
		{grace: 0, want: 1}, // zero needs --force
		{grace: 0, force: true, want: 0},
		{grace: -1, force: true, want: 0},
		{grace: 5, force: true, wantErr: true},
	}
	if g, err := (DeleteRequest{}).gracePeriod(); g != nil || err != nil {
		t.Fatalf("no flag: %v %v, want the pod's own period", g, err)
	}
	for _, c := range cases {
		grace := c.grace
		got, err := DeleteRequest{GracePeriod: &grace, Force: c.force}.gracePeriod()
		if (err != nil) != c.wantErr {
			t.Fatalf("grace %d force %v: err %v", c.grace, c.force, err)
		}
		if c.wantErr {
			continue
		}
		v := int64(-1)
		if got != nil {
			v = *got
		}
		if v != c.want {
			t.Errorf("grace %d force %v: %d, want %d", c.grace, c.force, v, c.want)
		}
	}
}
