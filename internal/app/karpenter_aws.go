package app

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/interruption"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// virtualTime prints an instant as the offset `advance` reports.
func virtualTime(t time.Time) string {
	return "virtual time " + t.Sub(cluster.Epoch).Round(time.Second).String()
}

// KarpenterInterrupt sends EC2's spot interruption warning for a node or
// NodeClaim, then runs the cluster until it settles
// (docs/karpenter-interruption.md).
func (a *App) KarpenterInterrupt(ref string) (err error) {
	defer a.finish(&err)
	work := a.change()
	n, err := interruption.Notify(work, ref)
	if err != nil {
		return err
	}
	o := &output{}
	what := "nodeclaim/" + n.NodeClaim
	if n.Node != "" {
		what = "node/" + n.Node
	}
	if n.Again {
		o.out("%s already received a spot interruption notice", what)
	} else {
		o.out("%s: spot interruption notice sent for instance %s (%s, spot, %s); EC2 reclaims it at %s",
			what, n.Instance, n.InstanceType, n.Zone, virtualTime(work.Now.Add(interruption.ReclaimDelay)))
	}
	return a.commit(work, o)
}

// UnavailableRequest is `berth karpenter unavailable`.
type UnavailableRequest struct {
	Args  []string // TYPE ZONE CAPACITY-TYPE, or none to list
	For   time.Duration
	Clear bool
}

// KarpenterUnavailable tells berth that EC2 has no capacity for an
// offering (until cleared or for a while), clears that, or lists what EC2
// and Karpenter's unavailable-offerings cache hold.
func (a *App) KarpenterUnavailable(r UnavailableRequest) (err error) {
	defer a.finish(&err)
	if len(r.Args) == 0 {
		if r.Clear || r.For != 0 {
			return fmt.Errorf("name the offering: berth karpenter unavailable TYPE ZONE CAPACITY-TYPE")
		}
		return a.listUnavailable()
	}
	if len(r.Args) != 3 {
		return fmt.Errorf("want TYPE ZONE CAPACITY-TYPE (e.g. m5.large us-west-2a spot), got %d argument(s)", len(r.Args))
	}
	if r.For < 0 {
		return fmt.Errorf("--for %s is negative", r.For)
	}
	if r.Clear && r.For != 0 {
		return fmt.Errorf("--clear and --for cannot be used together")
	}
	work := a.change()
	it, zone, ct := r.Args[0], r.Args[1], r.Args[2]
	if err := validateOffering(work, it, zone, ct); err != nil {
		return err
	}
	state := work.Karpenter.AWSState()
	kept := state.NoCapacity[:0:0]
	had := false
	for _, n := range state.NoCapacity {
		if n.InstanceType == it && n.Zone == zone && n.CapacityType == ct {
			had = had || n.Active(work.Now)
			continue
		}
		kept = append(kept, n)
	}
	o := &output{}
	name := fmt.Sprintf("offering %s %s %s", it, zone, ct)
	switch {
	case r.Clear && !had:
		o.out("%s: EC2 already has capacity", name)
	case r.Clear:
		o.out("%s: EC2 has capacity again", name)
	default:
		n := cluster.NoCapacity{InstanceType: it, Zone: zone, CapacityType: ct}
		if r.For > 0 {
			n.Until = work.Now.Add(r.For)
			o.out("%s: EC2 has no capacity until %s", name, virtualTime(n.Until))
		} else {
			o.out("%s: EC2 has no capacity until cleared", name)
		}
		kept = append(kept, n)
	}
	sort.Slice(kept, func(i, j int) bool {
		a, b := kept[i], kept[j]
		return a.InstanceType+" "+a.Zone+" "+a.CapacityType < b.InstanceType+" "+b.Zone+" "+b.CapacityType
	})
	state.NoCapacity = kept
	return a.commit(work, o)
}

// validateOffering checks the names of an offering.
func validateOffering(s *cluster.State, it, zone, ct string) error {
	if _, ok := aws.Lookup(it); !ok {
		return fmt.Errorf("unknown instance type %q: not in berth's EC2 catalog", it)
	}
	switch ct {
	case scheduling.CapacityTypeSpot, scheduling.CapacityTypeOnDemand:
	default:
		return fmt.Errorf("capacity type %q: want spot or on-demand", ct)
	}
	region := pools.Region(s)
	if region == "" {
		if aws.RegionOfZone(zone) == zone {
			return fmt.Errorf("zone %q does not look like an availability zone (such as us-west-2a)", zone)
		}
		return nil
	}
	var names []string
	for _, z := range pools.RegionZones(s) {
		if z.Name == zone {
			return nil
		}
		names = append(names, z.Name)
	}
	return fmt.Errorf("zone %q is not a zone of the cluster's region %s (%s)", zone, region, strings.Join(names, ", "))
}

// listUnavailable prints the EC2 outages and the cache, one offering a row.
func (a *App) listUnavailable() error {
	s := a.state
	type row struct{ ec2, karpenter string }
	rows := map[string]*row{}
	get := func(key string) *row {
		if rows[key] == nil {
			rows[key] = &row{ec2: "-", karpenter: "-"}
		}
		return rows[key]
	}
	if st := s.Karpenter.AWS; st != nil {
		for _, n := range st.NoCapacity {
			if !n.Active(s.Now) {
				continue
			}
			r := get(n.InstanceType + "\t" + n.Zone + "\t" + n.CapacityType)
			r.ec2 = "no capacity until cleared"
			if !n.Until.IsZero() {
				r.ec2 = "no capacity until " + virtualTime(n.Until)
			}
		}
		u := instancetype.NewUnavailableOfferings()
		u.Restore(st.Unavailable, st.UnavailableSeq)
		for _, e := range u.Entries() {
			if s.Now.After(e.Expires) {
				continue
			}
			key := "*\t*\t" + e.Key
			if e.Kind == "zone" {
				key = "*\t" + e.Key + "\t*"
			}
			if e.Kind == "offering" {
				parts := strings.SplitN(e.Key, ":", 3) // capacityType:type:zone
				if len(parts) == 3 {
					key = parts[1] + "\t" + parts[2] + "\t" + parts[0]
				}
			}
			get(key).karpenter = "unavailable until " + virtualTime(e.Expires)
		}
	}
	if len(rows) == 0 {
		fmt.Fprintln(a.opts.Out, "No unavailable offerings: EC2 has capacity for every offering and Karpenter's cache is empty")
		return nil
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(a.opts.Out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE-TYPE\tZONE\tCAPACITY-TYPE\tEC2\tKARPENTER (UNAVAILABLE OFFERINGS CACHE)")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k, rows[k].ec2, rows[k].karpenter)
	}
	return tw.Flush()
}

// KarpenterSpotPrices loads `aws ec2 describe-spot-price-history` JSON
// into the state (the latest price per type and zone wins, merged with
// what was loaded before), or lists the stored prices when file is "".
func (a *App) KarpenterSpotPrices(file string) (err error) {
	defer a.finish(&err)
	if file == "" {
		return a.listSpotPrices()
	}
	if file == "-" {
		return fmt.Errorf("spot-prices: read from a file, not stdin (-f FILE.json)")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("spot-prices: %w", err)
	}
	work := a.change()
	st := work.Karpenter.AWSState()
	p := instancetype.PricingFromState(st)
	if p == nil {
		p = &instancetype.Pricing{}
	}
	before := len(p.SpotPrices())
	if err := p.LoadSpotPriceHistory(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	prices := p.SpotPrices()
	if len(prices) == before && before == 0 {
		return fmt.Errorf("%s: no Linux/UNIX spot price in SpotPriceHistory (berth, as Karpenter, reads only the Linux/UNIX product descriptions)", file)
	}
	types, zones := map[string]bool{}, map[string]bool{}
	var latest time.Time
	for _, sp := range prices {
		types[sp.InstanceType], zones[sp.Zone] = true, true
		if sp.Timestamp.After(latest) {
			latest = sp.Timestamp
		}
	}
	st.SpotPrices, st.SpotPriceSource = prices, file
	o := &output{}
	o.out("spot prices: %d (instance type, zone) price(s) for %d instance type(s) in %d zone(s); latest observation %s",
		len(prices), len(types), len(zones), latest.UTC().Format(time.RFC3339))
	return a.commit(work, o)
}

func (a *App) listSpotPrices() error {
	st := a.state.Karpenter.AWS
	if st == nil || len(st.SpotPrices) == 0 {
		fmt.Fprintf(a.opts.Out, "No spot prices loaded: spot offerings cost %.1f x on-demand (berth default; no offline source)\n", instancetype.DefaultSpotFraction)
		return nil
	}
	tw := tabwriter.NewWriter(a.opts.Out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE-TYPE\tZONE\tSPOT-PRICE\tOBSERVED")
	for _, sp := range st.SpotPrices {
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%s\n", sp.InstanceType, sp.Zone, sp.Price, sp.Timestamp.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}
