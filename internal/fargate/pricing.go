package fargate

import "math/big"

// Rate is Fargate's on-demand price in a region for Linux/x86 pods, in US
// dollars.
type Rate struct {
	PerVCPUHour string
	PerGBHour   string
}

// PriceSource and PriceDate say where the rates come from
// (docs/fargate.md#pricing).
const (
	PriceSource = "AWS Fargate pricing page, https://aws.amazon.com/fargate/pricing/ (Linux/x86, on-demand)"
	PriceDate   = "2026-08"
)

// Rates are the per-region rates berth knows. EKS runs Fargate pods on
// Linux/x86 only (ARM and Windows are ECS-only), and there is no Fargate
// Spot on EKS, so one rate pair per region is all a pod can be billed at.
// us-west-2 is the same tier as us-east-1 and eu-west-1 a third-party copy
// of the page; docs/fargate.md says how sure each figure is.
var Rates = map[string]Rate{
	"us-east-1": {PerVCPUHour: "0.04048", PerGBHour: "0.004445"},
	"us-west-2": {PerVCPUHour: "0.04048", PerGBHour: "0.004445"},
	"eu-west-1": {PerVCPUHour: "0.04456", PerGBHour: "0.00489"},
}

// HourlyPrice is the price of one hour of size z in region, as an exact
// decimal string ("0.0123425"); ok is false for a region berth has no rate for.
func HourlyPrice(region string, z Size) (price string, rate Rate, ok bool) {
	rate, ok = Rates[region]
	if !ok {
		return "", Rate{}, false
	}
	cpu, _ := new(big.Rat).SetString(rate.PerVCPUHour)
	mem, _ := new(big.Rat).SetString(rate.PerGBHour)
	total := new(big.Rat).Mul(cpu, big.NewRat(z.MilliCPU, 1000))
	total.Add(total, new(big.Rat).Mul(mem, big.NewRat(z.MemoryMiB, 1024)))
	return trimRat(total), rate, true
}

// trimRat prints a terminating decimal without trailing zeros.
func trimRat(r *big.Rat) string {
	s := r.FloatString(12)
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}
