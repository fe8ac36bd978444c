package cost

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
)

// Print writes the report as a table (kubectl's layout), json or csv.
func Print(w io.Writer, r *Report, output string) error {
	switch output {
	case "", "wide":
		return printTable(w, r, output == "wide")
	case "json":
		return printJSON(w, r)
	case "csv":
		return printCSV(w, r)
	}
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: csv,json,wide", output)
}

// column is one column of a roll-up: its header and its cell of a row.
type column struct {
	header string
	table  func(Row) string
	csv    func(Row) string
}

func (r *Report) columns(wide bool) []column {
	window := r.WindowStart != nil
	var cols []column
	add := func(header string, f func(Row) string, raw func(Row) string) {
		if raw == nil {
			raw = f
		}
		cols = append(cols, column{header, f, raw})
	}
	// field is a text column: "-" when empty in the table, empty in csv.
	field := func(header string, get func(Row) string) {
		add(header, func(x Row) string { return dash(get(x)) }, get)
	}
	switch r.By {
	case ByNode:
		field("NODE", func(x Row) string { return x.Name })
		field("GROUP", func(x Row) string { return x.Group })
		field("INSTANCE-TYPE", func(x Row) string { return x.InstanceType })
		field("ZONE", func(x Row) string { return x.Zone })
		field("CAPACITY", func(x Row) string { return x.CapacityType })
		add("PODS", func(x Row) string {
			if x.Until != nil {
				return "-"
			}
			return strconv.Itoa(x.Pods)
		}, func(x Row) string {
			if x.Until != nil {
				return ""
			}
			return strconv.Itoa(x.Pods)
		})
	case ByNodeGroup:
		field("GROUP", func(x Row) string { return x.Name })
		add("NODES", func(x Row) string { return strconv.Itoa(x.Nodes) }, nil)
	case ByNamespace:
		field("NAMESPACE", func(x Row) string { return x.Name })
		add("PODS", podCount, rawPodCount)
	case ByWorkload:
		field("NAMESPACE", func(x Row) string { return x.Namespace })
		field("WORKLOAD", func(x Row) string { return x.Name })
		add("PODS", podCount, rawPodCount)
	}
	add("$/HOUR", func(x Row) string {
		if x.Until != nil || x.Name == DeletedRow {
			return "-"
		}
		return money(x.PerHour, x.Unknown)
	}, func(x Row) string { return rawMoney(x.PerHour, x.Unknown) })
	if wide && r.By == ByNode {
		add("PRICE-SOURCE", func(x Row) string {
			if x.Name == "TOTAL" {
				return ""
			}
			return x.PriceSource
		}, nil)
	}
	if !window {
		return cols
	}
	if r.By == ByNode || r.By == ByNodeGroup {
		header := "HOURS"
		if r.By == ByNodeGroup {
			header = "NODE-HOURS"
		}
		add(header, func(x Row) string { return strconv.FormatFloat(x.Hours, 'f', 2, 64) },
			func(x Row) string { return strconv.FormatFloat(round(x.Hours), 'f', -1, 64) })
	}
	add("COST", func(x Row) string { return money(x.Cost, x.Unknown) }, func(x Row) string { return rawMoney(x.Cost, x.Unknown) })
	if r.By == ByNode {
		add("UNTIL", func(x Row) string {
			if x.Name == "TOTAL" {
				return ""
			}
			return until(x.Until)
		}, func(x Row) string { return until(x.Until) })
	}
	return cols
}

func podCount(x Row) string {
	if x.Name == IdleRow || x.Name == DeletedRow {
		return "-"
	}
	return strconv.Itoa(x.Pods)
}

func rawPodCount(x Row) string {
	if x.Name == IdleRow || x.Name == DeletedRow {
		return ""
	}
	return strconv.Itoa(x.Pods)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// money prints dollars with four decimals; an amount that leaves out
// unpriced nodes is marked "+?", one that has nothing known is <unknown>
// (docs/cost.md#unknown-prices).
func money(v float64, unknown int) string {
	switch {
	case unknown > 0 && v == 0:
		return "<unknown>"
	case unknown > 0:
		return strconv.FormatFloat(v, 'f', 4, 64) + "+?"
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

func rawMoney(v float64, unknown int) string {
	if unknown > 0 && v == 0 {
		return "unknown"
	}
	return strconv.FormatFloat(round(v), 'f', -1, 64)
}

// round keeps six decimals: float sums must not print 0.30000000000000004.
func round(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func until(t *time.Time) string {
	if t == nil {
		return "now"
	}
	return virtual(*t)
}

// virtual prints an instant as the offset `berth advance` reports.
func virtual(t time.Time) string { return t.Sub(cluster.Epoch).Round(time.Second).String() }

func printTable(w io.Writer, r *Report, wide bool) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 3, ' ', 0)
	cols := r.columns(wide)
	line := func(cells []string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	var cells []string
	for _, c := range cols {
		cells = append(cells, c.header)
	}
	line(cells)
	for _, row := range r.Rows {
		cells = cells[:0]
		for _, c := range cols {
			cells = append(cells, c.table(row))
		}
		line(cells)
	}
	cells = cells[:0]
	for i, c := range cols {
		switch {
		case i == 0:
			cells = append(cells, "TOTAL")
		case c.header == "$/HOUR" || c.header == "COST":
			cells = append(cells, c.table(r.Total))
		case c.header == "HOURS" || c.header == "NODE-HOURS":
			cells = append(cells, c.table(r.Total))
		case c.header == "NODES":
			cells = append(cells, strconv.Itoa(r.Total.Nodes))
		case c.header == "PODS":
			cells = append(cells, strconv.Itoa(r.Total.Pods))
		default:
			cells = append(cells, "")
		}
	}
	line(cells)
	if err := tw.Flush(); err != nil {
		return err
	}
	// An empty last cell (the total's UNTIL) must not leave trailing blanks.
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		if l != "" {
			fmt.Fprintln(w, strings.TrimRight(l, " \n"))
		}
	}
	if r.WindowStart != nil {
		fmt.Fprintf(w, "Window: virtual time %s to %s (%s).\n", virtual(*r.WindowStart), virtual(r.Now), r.Now.Sub(*r.WindowStart).Round(time.Second))
	}
	if n := len(r.Unpriced); n > 0 {
		fmt.Fprintf(w, "Unknown price: %d node(s), left out of every amount (marked +? or <unknown>):\n", n)
		const show = 10
		for i, u := range r.Unpriced {
			if i == show {
				fmt.Fprintf(w, "  and %d more\n", n-show)
				break
			}
			fmt.Fprintf(w, "  %s: %s\n", u.Node, u.Reason)
		}
	}
	return nil
}

func printCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	cols := r.columns(true)
	var rec []string
	for _, c := range cols {
		rec = append(rec, csvHeader(c.header))
	}
	// Tools cannot read "+?": the count of what an amount leaves out is a
	// column of its own.
	rec = append(rec, "unpriced")
	if err := cw.Write(rec); err != nil {
		return err
	}
	for _, row := range r.Rows {
		rec = rec[:0]
		for _, c := range cols {
			rec = append(rec, c.csv(row))
		}
		rec = append(rec, strconv.Itoa(row.Unknown))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvHeader is a column's name for tools: snake case, dollars as usd.
func csvHeader(h string) string {
	switch h {
	case "$/HOUR":
		return "usd_per_hour"
	case "COST":
		return "usd"
	}
	return strings.ReplaceAll(strings.ToLower(h), "-", "_")
}

// jsonReport is the -o json form; amounts are null when nothing of them
// is known, and "unknown" counts what they leave out.
type jsonReport struct {
	By          string      `json:"by"`
	VirtualTime string      `json:"virtualTime"`
	Window      *jsonWindow `json:"window,omitempty"`
	Rows        []jsonRow   `json:"rows"`
	Total       jsonRow     `json:"total"`
	Unpriced    []jsonUnpr  `json:"unpriced,omitempty"`
}

type jsonWindow struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type jsonUnpr struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

type jsonRow struct {
	Name         string   `json:"name"`
	Namespace    string   `json:"namespace,omitempty"`
	Group        string   `json:"group,omitempty"`
	InstanceType string   `json:"instanceType,omitempty"`
	Zone         string   `json:"zone,omitempty"`
	CapacityType string   `json:"capacityType,omitempty"`
	PriceSource  string   `json:"priceSource,omitempty"`
	Until        string   `json:"until,omitempty"`
	Nodes        int      `json:"nodes,omitempty"`
	Pods         int      `json:"pods,omitempty"`
	PerHour      *float64 `json:"usdPerHour"`
	Hours        *float64 `json:"nodeHours,omitempty"`
	Cost         *float64 `json:"usd,omitempty"`
	Unknown      int      `json:"unknown,omitempty"`
}

func (r *Report) jsonRow(x Row) jsonRow {
	amount := func(v float64) *float64 {
		if x.Unknown > 0 && v == 0 {
			return nil
		}
		v = round(v)
		return &v
	}
	out := jsonRow{Name: x.Name, Namespace: x.Namespace, Group: x.Group, InstanceType: x.InstanceType, Zone: x.Zone,
		CapacityType: x.CapacityType, PriceSource: x.PriceSource, Nodes: x.Nodes, Pods: x.Pods, Unknown: x.Unknown}
	if x.Until != nil {
		// A deleted node's price is the one it ran at.
		out.Until = virtual(*x.Until)
	}
	if x.Name != DeletedRow {
		out.PerHour = amount(x.PerHour)
	}
	if r.WindowStart != nil {
		out.Cost = amount(x.Cost)
		if r.By == ByNode || r.By == ByNodeGroup || x.Name == "TOTAL" {
			h := round(x.Hours)
			out.Hours = &h
		}
	}
	return out
}

func printJSON(w io.Writer, r *Report) error {
	out := jsonReport{By: r.By, VirtualTime: virtual(r.Now), Rows: []jsonRow{}, Total: r.jsonRow(r.Total)}
	if r.WindowStart != nil {
		out.Window = &jsonWindow{From: virtual(*r.WindowStart), To: virtual(r.Now)}
	}
	for _, x := range r.Rows {
		out.Rows = append(out.Rows, r.jsonRow(x))
	}
	for _, u := range r.Unpriced {
		out.Unpriced = append(out.Unpriced, jsonUnpr(u))
	}
	// <idle> and <deleted nodes> stay readable: no HTML escaping.
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	return enc.Encode(out)
}
