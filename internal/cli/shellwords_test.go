package cli

import (
	"reflect"
	"testing"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"berth get pods", []string{"berth", "get", "pods"}},
		{"  a   b ", []string{"a", "b"}},
		{`get pod -o jsonpath='{.items[0].metadata.name}'`, []string{"get", "pod", "-o", "jsonpath={.items[0].metadata.name}"}},
		{`a "b c" d\ e`, []string{"a", "b c", "d e"}},
		{`x "say \"hi\""`, []string{"x", `say "hi"`}},
		{`''`, []string{""}},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{`a 'b`, `a "b`} {
		if _, err := SplitWords(bad); err == nil {
			t.Errorf("SplitWords(%q) accepted", bad)
		}
	}
}
