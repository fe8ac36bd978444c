package aws

import (
	"reflect"
	"testing"
)

func TestZoneID(t *testing.T) {
	tests := []struct {
		zone, want string
		wantErr    bool
	}{
		{zone: "us-west-2a", want: "usw2-az1"},
		{zone: "us-west-2c", want: "usw2-az3"},
		{zone: "us-east-1c", want: "use1-az3"},
		{zone: "us-east-1f", want: "use1-az6"},
		{zone: "eu-west-1b", want: "euw1-az2"},
		{zone: "eu-central-1a", want: "euc1-az1"},
		{zone: "ap-northeast-1a", want: "apne1-az1"},
		{zone: "ap-southeast-2b", want: "apse2-az2"},
		{zone: "us-gov-west-1a", want: "usgw1-az1"},
		{zone: "us-west-2", wantErr: true},
		{zone: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.zone, func(t *testing.T) {
			got, err := ZoneID(tt.zone)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ZoneID(%q) = %q, %v; want %q (error %v)", tt.zone, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestDefaultZonesAndRegion(t *testing.T) {
	if got, want := DefaultZones("eu-west-1"), []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultZones = %v, want %v", got, want)
	}
	if got := DefaultZones(""); got[0] != "us-west-2a" {
		t.Errorf("DefaultZones(\"\") = %v, want us-west-2 zones", got)
	}
	for zone, want := range map[string]string{"us-east-1c": "us-east-1", "ap-south-1a": "ap-south-1", "us-west-2": "us-west-2"} {
		if got := RegionOfZone(zone); got != want {
			t.Errorf("RegionOfZone(%q) = %q, want %q", zone, got, want)
		}
	}
}
