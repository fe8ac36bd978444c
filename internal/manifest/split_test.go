package manifest

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitDocuments(t *testing.T) {
	type doc struct {
		start, line int
		json        bool
	}
	tests := []struct {
		name string
		in   string
		want []doc
	}{
		{"empty input", "", nil},
		{"only comments and separators", "# hi\n---\n\n--- # more\n# bye\n", nil},
		{"content start skips blanks and comments", "\n# c\na: 1\n---\nb: 2\n", []doc{{1, 3, false}, {5, 5, false}}},
		{"CRLF separators", "a: 1\r\n---\r\nb: 2\r\n", []doc{{1, 1, false}, {3, 3, false}}},
		{"document end marker alone is empty", "...\n---\na: 1\n", []doc{{3, 3, false}}},
		{"JSON stream", "\n{\"a\": 1}\n\n  {\"b\":\n 2}[3]", []doc{{2, 2, true}, {4, 4, true}, {5, 5, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := splitDocuments([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var got []doc
			for _, d := range docs {
				got = append(got, doc{d.start, d.line, d.json})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestYAMLErrorLines(t *testing.T) {
	tests := []struct {
		in    string
		start int
		want  string
	}{
		{"yaml: line 2: mapping values are not allowed in this context", 5, "yaml: line 6: mapping values are not allowed in this context"},
		{"yaml: unmarshal errors:\n  line 3: key \"a\" already set in map\n  line 4: key \"b\" already set in map", 1,
			`yaml: unmarshal errors: line 3: key "a" already set in map line 4: key "b" already set in map`},
	}
	for _, tt := range tests {
		if got := yamlError(errors.New(tt.in), tt.start).Error(); got != tt.want {
			t.Errorf("yamlError(%q, %d) = %q, want %q", tt.in, tt.start, got, tt.want)
		}
	}
}

func TestSourceAndLabels(t *testing.T) {
	if got, want := (Source{File: "a.yaml", Document: 2, Line: 7, Item: 3}).String(), "a.yaml:7: document 2 item 3"; got != want {
		t.Errorf("Source.String = %q, want %q", got, want)
	}
	if got, want := (Source{File: "ui", Document: 1}).String(), "ui: document 1"; got != want {
		t.Errorf("Source.String = %q, want %q", got, want)
	}
	tests := []struct{ kind, ns, name, want string }{
		{"Pod", "ui", "p", "(Pod ui/p)"},
		{"Node", "", "n", "(Node n)"},
		{"Pod", "ui", "", "(Pod)"},
		{"Pod", "", "a\nb", `(Pod "a\nb")`},
	}
	for _, tt := range tests {
		if got := objectLabel(tt.kind, tt.ns, tt.name); got != tt.want {
			t.Errorf("objectLabel(%q, %q, %q) = %q, want %q", tt.kind, tt.ns, tt.name, got, tt.want)
		}
	}
}
