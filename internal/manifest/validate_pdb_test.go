package manifest

import (
	"strings"
	"testing"
)

func TestValidatePodDisruptionBudget(t *testing.T) {
	head := "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n"
	tests := []struct {
		name string
		spec string
		want []string
	}{
		{name: "minAvailable int", spec: "  minAvailable: 2\n"},
		{name: "maxUnavailable percent", spec: "  maxUnavailable: 25%\n"},
		{
			name: "both set",
			spec: "  minAvailable: 1\n  maxUnavailable: 1\n",
			want: []string{`spec: Invalid value: `, `minAvailable and maxUnavailable cannot be both set`},
		},
		{
			name: "negative",
			spec: "  minAvailable: -1\n",
			want: []string{`spec.minAvailable: Invalid value: -1: must be greater than or equal to 0`},
		},
		{
			name: "over 100 percent",
			spec: "  maxUnavailable: 120%\n",
			want: []string{`spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%`},
		},
		{
			name: "not a percent",
			spec: "  minAvailable: half\n",
			want: []string{`spec.minAvailable: Invalid value: "half": a valid percent string must be`},
		},
		{
			name: "unknown eviction policy",
			spec: "  minAvailable: 1\n  unhealthyPodEvictionPolicy: Sometimes\n",
			want: []string{`spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "IfHealthyBudget", "AlwaysAllow"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Decode("v.yaml", []byte(head+tt.spec))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			err = Validate(objs[0])
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
