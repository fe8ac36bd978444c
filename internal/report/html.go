package report

import (
	_ "embed"
	"html/template"
	"io"
	"strings"
)

// page.html.tmpl is the whole page: inline CSS and SVG, no script, no
// external resource, so the file opens anywhere offline (docs/report.md).
//
//go:embed page.html.tmpl
var pageText string

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"short": shortNode,
	"join":  strings.Join,
	"add":   func(a, b int) int { return a + b },
	"sub":   func(a, b int) int { return a - b },
}).Parse(pageText))

// Write renders the page as HTML. html/template escapes every name and
// message taken from the cluster.
func Write(w io.Writer, p *Page) error { return pageTemplate.Execute(w, p) }

// shortNode trims an EC2 node name to its first label for compact tiles
// (ip-10-0-1-2.eu-west-1.compute.internal -> ip-10-0-1-2); the full name
// stays in the tile's title.
func shortNode(name string) string {
	if i := strings.IndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}
