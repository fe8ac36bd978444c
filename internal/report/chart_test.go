package report

import "testing"

func TestNiceCeil(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{0.004, 0.01}, {0.3216, 0.5}, {0.11, 0.2}, {1, 1}, {118.8, 200}, {501, 1000},
	} {
		if got := niceCeil(c.in); got < c.want*0.999999 || got > c.want*1.000001 {
			t.Errorf("niceCeil(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestBar(t *testing.T) {
	for _, c := range []struct {
		used, alloc int64
		pct, width  int
		over        bool
	}{
		{0, 1000, 0, 0, false}, {500, 1000, 50, 50, false}, {1500, 1000, 150, 100, true}, {1, 0, 100, 100, false},
	} {
		b := bar(c.used, c.alloc, "")
		if b.Percent != c.pct || b.Width != c.width || b.Over != c.over {
			t.Errorf("bar(%d, %d) = %+v", c.used, c.alloc, b)
		}
	}
}

func TestShortNodeAndMoney(t *testing.T) {
	if got := shortNode("ip-10-0-1-2.eu-west-1.compute.internal"); got != "ip-10-0-1-2" {
		t.Error(got)
	}
	if got := shortNode("kind-worker"); got != "kind-worker" {
		t.Error(got)
	}
	for _, c := range []struct {
		v       float64
		unknown int
		want    string
	}{{0.5, 0, "$0.5000"}, {0, 2, "unknown"}, {1.25, 1, "$1.2500 + unknown"}} {
		if got := money(c.v, c.unknown); got != c.want {
			t.Errorf("money(%v, %d) = %q, want %q", c.v, c.unknown, got, c.want)
		}
	}
}
