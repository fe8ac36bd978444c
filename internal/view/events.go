package view

import (
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/berth-sim/berth/internal/cluster"
)

// NoEventsFound is what `kubectl events` prints on stderr (exit 0) when
// there is nothing to show.
type NoEventsFound struct {
	Namespace     string
	AllNamespaces bool
}

func (e *NoEventsFound) Error() string {
	if e.AllNamespaces {
		return "No events found."
	}
	return fmt.Sprintf("No events found in %s namespace.", e.Namespace)
}

// Events prints `kubectl events`: oldest first, LAST SEEN TYPE REASON
// OBJECT MESSAGE (NAMESPACE first with -A), OBJECT as Kind/name.
func Events(w io.Writer, s *cluster.State, namespace string, allNamespaces bool) error {
	if namespace == "" {
		namespace = "default"
	}
	var events []*corev1.Event
	for _, obj := range listKind(s, cluster.EventKind, namespaceFilter(namespace, allNamespaces)) {
		events = append(events, obj.(*corev1.Event))
	}
	if len(events) == 0 {
		return &NoEventsFound{Namespace: namespace, AllNamespaces: allNamespaces}
	}
	sortEventsByTime(events)
	tw := printers.GetNewTabWriter(w)
	defer tw.Flush()
	if allNamespaces {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprint(tw, "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE\n")
	for _, e := range events {
		if allNamespaces {
			fmt.Fprintf(tw, "%v\t", e.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%v\n", eventLastSeen(s, e),
			printers.EscapeTerminal(e.Type), printers.EscapeTerminal(e.Reason),
			printers.EscapeTerminal(e.InvolvedObject.Kind), printers.EscapeTerminal(e.InvolvedObject.Name),
			printers.EscapeTerminal(strings.TrimSpace(e.Message)))
	}
	return nil
}

func namespaceFilter(namespace string, all bool) string {
	if all {
		return ""
	}
	return namespace
}
