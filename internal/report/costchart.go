package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/cost"
)

// CostView is the cost section: $/hour now and since the state began per
// group, as `berth cost --by nodegroup --since 0` prints them, and a
// stacked step chart of $/hour over virtual time.
type CostView struct {
	PerHour string
	Total   string
	Rows    []CostRow
	// Unpriced counts the nodes without a known price (shown, never 0).
	Unpriced int
	Chart    Chart
}

// CostRow is one group's line.
type CostRow struct {
	Name    string
	Nodes   int
	PerHour string
	Cost    string
	Color   string
}

// Chart is the inline SVG's geometry, worked out here so the template
// only places numbers.
type Chart struct {
	Width, Height int
	// Plot area.
	Left, Top, Right, Bottom int
	Areas                    []Area
	YTicks                   []Tick
	XTicks                   []Tick
	Empty                    bool
}

// Area is one group's band.
type Area struct {
	Name  string
	Color string
	Path  string
}

// Tick is an axis label at a position.
type Tick struct {
	Pos   int
	Label string
}

// palette colours the groups in the order of their cost; the last colour
// is for "other" when there are more groups than colours.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"}

func costView(s *cluster.State, lives []cost.Life) CostView {
	var v CostView
	rep, err := cost.Build(s, cost.Options{By: cost.ByNodeGroup, Window: true})
	if err != nil {
		// By and Since are constants here; Build cannot refuse them.
		panic(err)
	}
	v.PerHour = money(rep.Total.PerHour, rep.Total.Unknown)
	v.Total = money(rep.Total.Cost, rep.Total.Unknown)
	v.Unpriced = len(rep.Unpriced)
	// Colour the groups by what they cost in the window, most first, so
	// the biggest bands keep the strongest colours.
	rows := append([]cost.Row(nil), rep.Rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Cost > rows[j].Cost })
	colors := map[string]string{}
	for i, r := range rows {
		colors[r.Name] = palette[min(i, len(palette)-1)]
	}
	for _, r := range rep.Rows {
		v.Rows = append(v.Rows, CostRow{Name: r.Name, Nodes: r.Nodes, PerHour: money(r.PerHour, r.Unknown),
			Cost: money(r.Cost, r.Unknown), Color: colors[r.Name]})
	}
	v.Chart = chart(s, lives, rows, colors)
	return v
}

// money writes dollars, or "unknown" when a price was missing
// (docs/cost.md#unknown-prices: never a silent 0).
func money(v float64, unknown int) string {
	if unknown > 0 {
		if v == 0 {
			return "unknown"
		}
		return fmt.Sprintf("$%.4f + unknown", v)
	}
	return fmt.Sprintf("$%.4f", v)
}

// chart stacks each group's $/hour as a step function of virtual time
// from 0 to now; the bands follow rows' order (most costly at the bottom).
func chart(s *cluster.State, lives []cost.Life, rows []cost.Row, colors map[string]string) Chart {
	c := Chart{Width: 560, Height: 220, Left: 56, Top: 10, Right: 548, Bottom: 190}
	span := s.Now.Sub(cluster.Epoch)
	// Break points: every start and end within [0, now].
	cuts := map[time.Duration]bool{0: true, span: true}
	for _, l := range lives {
		for _, t := range []time.Time{l.Start, l.End} {
			if d := t.Sub(cluster.Epoch); d > 0 && d < span {
				cuts[d] = true
			}
		}
	}
	var xs []time.Duration
	for d := range cuts {
		xs = append(xs, d)
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	if span <= 0 {
		// No virtual time has passed: draw today's rate across the chart.
		xs = []time.Duration{0, 1}
	}
	// rate[g][i] is group g's $/hour over [xs[i], xs[i+1]).
	rate := map[string][]float64{}
	for _, l := range lives {
		if !l.Price.Known {
			continue
		}
		r := rate[l.Group]
		if r == nil {
			r = make([]float64, len(xs))
			rate[l.Group] = r
		}
		for i := 0; i+1 < len(xs); i++ {
			from, to := cluster.Epoch.Add(xs[i]), cluster.Epoch.Add(xs[i+1])
			if span <= 0 {
				if l.Live {
					r[i] += l.Price.PerHour
				}
				continue
			}
			if l.Start.Before(to) && l.End.After(from) {
				r[i] += l.Price.PerHour
			}
		}
	}
	peak := 0.0
	for i := 0; i+1 < len(xs); i++ {
		sum := 0.0
		for _, r := range rate {
			sum += r[i]
		}
		peak = max(peak, sum)
	}
	if peak == 0 {
		c.Empty = true
		return c
	}
	top := niceCeil(peak)
	x := func(d time.Duration) float64 {
		return float64(c.Left) + float64(c.Right-c.Left)*float64(d)/float64(xs[len(xs)-1])
	}
	y := func(v float64) float64 { return float64(c.Bottom) - float64(c.Bottom-c.Top)*v/top }
	base := make([]float64, len(xs))
	for _, row := range rows {
		r := rate[row.Name]
		if r == nil {
			continue
		}
		// Upper edge left to right, then the lower edge back; repeated
		// points (a rate that did not change at a cut) are dropped.
		var pts [][2]float64
		add := func(px, py float64) {
			p := [2]float64{math.Round(px*10) / 10, math.Round(py*10) / 10}
			if n := len(pts); n > 0 && pts[n-1] == p {
				return
			}
			if n := len(pts); n > 1 && (pts[n-1][0] == p[0] && pts[n-2][0] == p[0] || pts[n-1][1] == p[1] && pts[n-2][1] == p[1]) {
				// Collinear with the last two points: extend the segment.
				pts[n-1] = p
				return
			}
			pts = append(pts, p)
		}
		for i := 0; i+1 < len(xs); i++ {
			add(x(xs[i]), y(base[i]+r[i]))
			add(x(xs[i+1]), y(base[i]+r[i]))
		}
		for i := len(xs) - 2; i >= 0; i-- {
			add(x(xs[i+1]), y(base[i]))
			add(x(xs[i]), y(base[i]))
		}
		var b strings.Builder
		for i, p := range pts {
			if i == 0 {
				fmt.Fprintf(&b, "M%.1f %.1f", p[0], p[1])
				continue
			}
			fmt.Fprintf(&b, " L%.1f %.1f", p[0], p[1])
		}
		b.WriteString(" Z")
		c.Areas = append(c.Areas, Area{Name: row.Name, Color: colors[row.Name], Path: b.String()})
		for i := range r {
			base[i] += r[i]
		}
	}
	for i := 0; i <= 5; i++ {
		v := top * float64(i) / 5
		label := fmt.Sprintf("$%.2f", v)
		if top < 0.5 {
			label = fmt.Sprintf("$%.3f", v)
		}
		c.YTicks = append(c.YTicks, Tick{Pos: int(y(v) + 0.5), Label: label})
	}
	if span > 0 {
		// Round the labels to what the span makes worth reading.
		unit := time.Second
		switch {
		case span >= 10*time.Hour:
			unit = time.Hour
		case span >= 10*time.Minute:
			unit = time.Minute
		}
		for i := 0; i <= 4; i++ {
			d := span * time.Duration(i) / 4
			c.XTicks = append(c.XTicks, Tick{Pos: int(x(d) + 0.5), Label: duration(d.Round(unit))})
		}
	} else {
		c.XTicks = []Tick{{Pos: c.Left, Label: "0s"}}
	}
	return c
}

// niceCeil rounds a positive amount up to 1, 2 or 5 times a power of ten,
// so the axis ticks read well.
func niceCeil(v float64) float64 {
	step := 0.01
	for {
		for _, m := range []float64{1, 2, 5} {
			if step*m >= v {
				return step * m
			}
		}
		step *= 10
	}
}

// duration writes a rounded duration without its zero tail (2h0m0s -> 2h,
// 1h30m0s -> 1h30m).
func duration(d time.Duration) string {
	out := d.String()
	if strings.HasSuffix(out, "m0s") {
		out = strings.TrimSuffix(out, "0s")
	}
	if strings.HasSuffix(out, "h0m") {
		out = strings.TrimSuffix(out, "0m")
	}
	return out
}
