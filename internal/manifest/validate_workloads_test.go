package manifest

import (
	"strings"
	"testing"
)

func TestValidateWorkloads(t *testing.T) {
	const tmpl = "  template:\n    metadata: {labels: {app: b}}\n    spec:\n      containers: [{name: c, image: nginx}]\n"
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{
			name: "daemonset selector mismatch",
			doc:  "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: a}}\n" + tmpl,
			want: []string{`(DaemonSet d): spec.template.metadata.labels: Invalid value: {"app":"b"}: ` + "`selector` does not match template `labels`"},
		},
		{
			name: "valid daemonset",
			doc:  "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: b}}\n" + tmpl,
		},
		{
			name: "statefulset selector mismatch and bad policy",
			doc:  "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  podManagementPolicy: Random\n  selector: {matchLabels: {app: a}}\n" + tmpl,
			want: []string{
				`(StatefulSet s): spec.template.metadata.labels: Invalid value: {"app":"b"}: ` + "`selector` does not match template `labels`",
				`(StatefulSet s): spec.podManagementPolicy: Invalid value: "Random": must be 'OrderedReady' or 'Parallel'`,
			},
		},
		{
			name: "job without selector is valid",
			doc:  "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: perl}]\n",
		},
		{
			name: "job restartPolicy Always",
			doc:  "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Always\n      containers: [{name: c, image: perl}]\n",
			want: []string{`(Job j): spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Decode("v.yaml", []byte(tt.doc))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			err = Validate(objs[0])
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if want := prefix + tt.want[i]; got[i] != want {
					t.Errorf("error %d\n  got  %s\n  want %s", i, got[i], want)
				}
			}
		})
	}
}
