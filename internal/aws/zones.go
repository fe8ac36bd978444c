package aws

import (
	"fmt"
	"strings"
)

// DefaultRegion is eksctl's CLI default region.
const DefaultRegion = "us-west-2"

// DefaultZones are the zones eksctl would use in region when none are named:
// the first three letters. (eksctl really picks three at random from those
// the account sees; berth picks a, b, c so that runs are reproducible.)
func DefaultZones(region string) []string {
	if region == "" {
		region = DefaultRegion
	}
	return []string{region + "a", region + "b", region + "c"}
}

// RegionOfZone strips the zone letter: us-west-2a -> us-west-2.
func RegionOfZone(zone string) string {
	if n := len(zone); n > 0 && zone[n-1] >= 'a' && zone[n-1] <= 'z' {
		return zone[:n-1]
	}
	return zone
}

// directionCodes shorten the direction words of region names the way AWS
// zone IDs do (us-east-1 -> use1, ap-northeast-1 -> apne1, eu-central-1 -> euc1).
var directionCodes = map[string]string{
	"north": "n", "south": "s", "east": "e", "west": "w", "central": "c",
	"northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw",
	"gov": "g",
}

// ZoneIDPrefix is the zone-ID prefix of a region: us-west-2 -> usw2.
func ZoneIDPrefix(region string) string {
	parts := strings.Split(region, "-")
	var b strings.Builder
	for i, p := range parts {
		switch code, ok := directionCodes[p]; {
		case i == 0:
			b.WriteString(p)
		case ok:
			b.WriteString(code)
		default:
			b.WriteString(p)
		}
	}
	return b.String()
}

// ZoneID is the topology.k8s.aws/zone-id of a zone. AWS maps zone names to
// IDs differently in every account; berth uses the fixed mapping letter a ->
// az1, b -> az2, and so on, so us-west-2a is usw2-az1 and us-east-1c use1-az3.
func ZoneID(zone string) (string, error) {
	n := len(zone)
	if n < 2 || zone[n-1] < 'a' || zone[n-1] > 'z' || zone[n-2] < '0' || zone[n-2] > '9' {
		return "", fmt.Errorf("%q is not an availability zone name (such as us-west-2a)", zone)
	}
	return fmt.Sprintf("%s-az%d", ZoneIDPrefix(zone[:n-1]), int(zone[n-1]-'a')+1), nil
}
