package app

import (
	"slices"
	"strings"

	"github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/view"
)

// EventScope says which events a read-only command loads: the event log is
// the largest part of a long-running cluster's state and most commands
// print none of it, or only the events of the objects they name
// (docs/state.md#speed). The zero value loads every event.
type EventScope struct {
	// None loads no events.
	None bool
	// About, when not empty, loads only the events whose involved object
	// has one of these names.
	About []string
}

func (e EventScope) loader() func(dir string) (*cluster.State, error) {
	switch {
	case e.None:
		return func(dir string) (*cluster.State, error) { return cluster.LoadSome(dir, nil) }
	case len(e.About) > 0:
		names := slices.Clone(e.About)
		return func(dir string) (*cluster.State, error) {
			return cluster.LoadSome(dir, func(name string) bool { return slices.Contains(names, name) })
		}
	}
	return cluster.Load
}

// GetEvents is the scope of `berth get ARGS`: no events unless it may
// print some: events themselves, and node groups (their cluster-autoscaler
// status comes from events). Any argument it cannot resolve to one kind (a
// category such as "all", a typo) loads them all: whole whenever in doubt.
func GetEvents(args []string) EventScope {
	for _, typ := range argTypes(args) {
		res, err := view.LookupResource(typ)
		if err != nil {
			return EventScope{}
		}
		gk := res.GVK().GroupKind()
		if gk.Kind == "Event" || gk == controller.NodeGroupGVK.GroupKind() {
			return EventScope{}
		}
	}
	return EventScope{None: len(args) > 0}
}

// DescribeEvents is the scope of `berth describe`: pods and nodes named
// without a selector show only the events about themselves (their
// describers search events by name), so only those are loaded; everything
// else loads every event.
func DescribeEvents(r DescribeRequest) EventScope {
	if len(r.Args) == 0 || r.Selector != "" {
		return EventScope{}
	}
	kind, names := r.Args[0], r.Args[1:]
	if _, _, ok := splitTypeName(kind); ok {
		kind, names = "", nil
		for _, arg := range r.Args {
			typ, name, ok := splitTypeName(arg)
			if !ok || (kind != "" && typ != kind) {
				return EventScope{}
			}
			kind, names = typ, append(names, name)
		}
	}
	res, err := view.LookupResource(kind)
	if err != nil || len(names) == 0 {
		return EventScope{}
	}
	if gk := res.GVK().GroupKind(); gk.Group != "" || (gk.Kind != "Pod" && gk.Kind != "Node") {
		return EventScope{}
	}
	return EventScope{About: names}
}

// argTypes returns the resource types `get` arguments name.
func argTypes(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	if _, _, ok := splitTypeName(args[0]); !ok {
		return strings.Split(args[0], ",")
	}
	var types []string
	for _, arg := range args {
		typ, _, _ := splitTypeName(arg)
		types = append(types, typ)
	}
	return types
}
