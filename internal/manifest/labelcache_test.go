package manifest

import (
	"strings"
	"testing"
)

func TestLabelsValid(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{nil, true},
		{map[string]string{"app": "web", "example.com/tier": "a-b.c_d"}, true},
		{map[string]string{"app": "web"}, true}, // now remembered
		{map[string]string{"app": "web", "bad key": "x"}, false},
		{map[string]string{"app": "-x"}, false},
		{map[string]string{"app": strings.Repeat("v", 64)}, false},
		{map[string]string{"app": "-x"}, false}, // invalid pairs are never remembered
	} {
		if got := labelsValid(tc.labels); got != tc.want {
			t.Errorf("labelsValid(%v) = %v, want %v", tc.labels, got, tc.want)
		}
	}
	// An invalid label still produces the API server's error.
	objs, err := Decode("x.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    app: web\n    bad key: x\nspec:\n  containers:\n  - name: c\n    image: i\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(objs[0]); err == nil || !strings.Contains(err.Error(), `metadata.labels: Invalid value: "bad key"`) {
		t.Errorf("Validate: %v", err)
	}
}
