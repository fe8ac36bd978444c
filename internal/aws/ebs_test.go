package aws

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Expected values are those of the aws-ebs-csi-driver limits table for the
// same types (the documented EKS examples included).
func TestEBSVolumeLimit(t *testing.T) {
	cases := []struct {
		typ       string
		limit     int
		dedicated bool
	}{
		{"m5.large", 27, false},      // not in the table: default shared 27
		{"m7i.large", 32, true},      // {32, dedicated}
		{"c4.large", 39, true},       // non-Nitro
		{"c5d.large", 26, false},     // one NVMe disk
		{"c5d.24xlarge", 23, false},  // four NVMe disks
		{"c7g.large", 27, false},     // Graviton3 shares attachments
		{"c8g.16xlarge", 48, true},   // {48, dedicated}
		{"m5.metal", 31, false},      // {31, shared}
		{"c7i.metal-48xl", 79, true}, // {79, dedicated}
		{"no-such.type", 27, false},  // driver default
	}
	for _, c := range cases {
		limit, kind := EBSVolumeLimit(c.typ)
		if limit != c.limit || (kind == attachmentDedicated) != c.dedicated {
			t.Errorf("%s: got %d %s, want %d dedicated=%v", c.typ, limit, kind, c.limit, c.dedicated)
		}
	}
}

func TestEBSAttachLimit(t *testing.T) {
	cases := []struct {
		typ      string
		enis     int
		reserved int
		want     int
	}{
		{"m5.large", 2, 1, 25},  // 27 - 1 - 1
		{"m5.large", 3, 1, 24},  // a third ENI lowers a shared limit
		{"m7i.large", 3, 1, 31}, // dedicated: ENIs do not count
		{"c4.large", 2, 1, 38},
		{"m5.large", 2, 40, 1}, // never below 1
	}
	for _, c := range cases {
		if got := EBSAttachLimit(c.typ, c.enis, c.reserved); got != c.want {
			t.Errorf("%s enis=%d reserved=%d: got %d, want %d", c.typ, c.enis, c.reserved, got, c.want)
		}
	}
}

func TestEBSVolumeCapacity(t *testing.T) {
	cases := map[string]string{
		"10Gi":  "10Gi",
		"1":     "1Gi",
		"1.5Gi": "2Gi",
		"10G":   "10Gi", // 10e9 bytes is 9.31 GiB
		"1Ti":   "1Ti",
		"100Mi": "1Gi",
	}
	for in, want := range cases {
		got := EBSVolumeCapacity(resource.MustParse(in))
		if got.String() != want {
			t.Errorf("%s: got %s, want %s", in, got.String(), want)
		}
	}
}

func TestZoneTopologyKeyForDriver(t *testing.T) {
	cases := map[string]string{
		"v1.32.1": EBSZoneTopologyKey,
		"1.20.0":  EBSZoneTopologyKey,
		"v1.33.0": WellKnownZoneTopologyKey,
		"v1.45.0": WellKnownZoneTopologyKey,
		"":        WellKnownZoneTopologyKey,
		"latest":  WellKnownZoneTopologyKey,
	}
	for v, want := range cases {
		if got := ZoneTopologyKeyForDriver(v); got != want {
			t.Errorf("%q: got %s, want %s", v, got, want)
		}
	}
}

func TestEBSVolumeTypeAndRange(t *testing.T) {
	if got := EBSVolumeType(map[string]string{"Type": "IO2"}); got != "io2" {
		t.Errorf("type key is case-insensitive: got %s", got)
	}
	if got := EBSVolumeType(nil); got != "gp3" {
		t.Errorf("default type: got %s", got)
	}
	for _, typ := range EBSVolumeTypes {
		lo, hi, ok := EBSSizeRange(typ)
		if !ok || lo.Cmp(hi) >= 0 {
			t.Errorf("%s: bad range %s..%s", typ, lo.String(), hi.String())
		}
	}
	if _, hi, _ := EBSSizeRange("gp3"); hi.String() != "64Ti" {
		t.Errorf("gp3 max: %s", hi.String())
	}
	if _, _, ok := EBSSizeRange("gp4"); ok {
		t.Error("gp4 is not an EBS type")
	}
}
