package controllerutil

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

// TestSyncEachCreationOrder: a work queue serves objects in the order they
// were created, and an object deleted by an earlier sync is skipped.
func TestSyncEachCreationOrder(t *testing.T) {
	s := cluster.New("", 1)
	for _, name := range []string{"web", "api", "db"} {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)}}
		d.ResourceVersion = s.Bump()
		s.NoteCreated(d.UID)
		s.Deployments[cluster.Key("default", name)] = d
	}
	var order []string
	_, err := SyncEach(s, s.Deployments, "Deployment", func(d *appsv1.Deployment) (bool, error) {
		order = append(order, d.Name)
		if d.Name == "web" {
			delete(s.Deployments, "default/api")
		}
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"web", "db"}; !reflect.DeepEqual(order, want) {
		t.Fatalf("synced %v, want %v", order, want)
	}
}
