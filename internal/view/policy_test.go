package view

import (
	"bytes"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
)

func pdbState() *cluster.State {
	s := seedState()
	one, half := intstr.FromInt32(1), intstr.FromString("50%")
	s.PodDisruptionBudgets["ui/ui"] = &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui", CreationTimestamp: at(s, 5*time.Minute)},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "ui"}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 2},
	}
	s.PodDisruptionBudgets["ui/half"] = &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "half", Namespace: "ui", CreationTimestamp: at(s, 90*time.Second)},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &half},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 2},
	}
	return s
}

func TestGetPDB(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"pdb"}, "NAME   MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE\n" +
			"half   50%             N/A               2                     90s\n" +
			"ui     N/A             1                 0                     5m\n"},
		{[]string{"poddisruptionbudgets.policy", "ui"}, "NAME   MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE\n" +
			"ui     N/A             1                 0                     5m\n"},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		if err := Get(&out, pdbState(), GetOptions{Args: tc.args, Namespace: "ui"}); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if out.String() != tc.want {
			t.Errorf("%v:\n got:\n%s\nwant:\n%s", tc.args, out.String(), tc.want)
		}
	}
}

func TestDescribePDB(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{"ui", "Name:             ui\n" +
			"Namespace:        ui\n" +
			"Max unavailable:  1\n" +
			"Selector:         app.kubernetes.io/name=ui\n" +
			"Status:\n" +
			"    Allowed disruptions:  0\n" +
			"    Current:              1\n" +
			"    Desired:              1\n" +
			"    Total:                2\n" +
			"Events:                   <none>\n"},
		{"half", "Name:           half\n" +
			"Namespace:      ui\n" +
			"Min available:  50%\n" +
			"Selector:       <unset>\n" +
			"Status:\n" +
			"    Allowed disruptions:  2\n" +
			"    Current:              0\n" +
			"    Desired:              0\n" +
			"    Total:                0\n" +
			"Events:                   <none>\n"},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		if err := Describe(&out, pdbState(), "pdb", "ui", []string{tc.name}, ""); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", tc.name, out.String(), tc.want)
		}
	}
}
