package cluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Clone returns an independent deep copy, for callers that need a
// throw-away state (what-if simulations, tests). Objects are copied with
// their generated DeepCopy, the small non-object fields through JSON as
// they are stored. The copy has no tie to the state database: saving it
// writes the whole state.
func (s *State) Clone() *State {
	l := stateLayout()
	c := &State{}
	src, dst := reflect.ValueOf(s).Elem(), reflect.ValueOf(c).Elem()
	for _, f := range l.meta {
		data, err := json.Marshal(src.Field(f.field).Interface())
		if err != nil {
			panic(err)
		}
		if err := json.Unmarshal(data, dst.Field(f.field).Addr().Interface()); err != nil {
			panic(err)
		}
	}
	for _, b := range l.objects {
		from := src.Field(b.field)
		if from.IsNil() {
			continue
		}
		to := reflect.MakeMapWithSize(from.Type(), from.Len())
		iter := from.MapRange()
		for iter.Next() {
			obj := iter.Value().Interface().(runtime.Object).DeepCopyObject()
			to.SetMapIndex(iter.Key(), reflect.ValueOf(obj))
		}
		dst.Field(b.field).Set(to)
	}
	if s.Events != nil {
		c.Events = make([]*corev1.Event, len(s.Events))
		for i, e := range s.Events {
			c.Events[i] = e.DeepCopy()
		}
	}
	c.init()
	// A copy of a partly loaded state is just as partial.
	c.partial = s.partial
	return c
}

// SaveLegacyJSON writes s as the state.json of berth before the state
// database, for tests of the upgrade (docs/state.md#upgrade).
func (s *State) SaveLegacyJSON(dir string) error {
	c := *s
	c.FormatVersion = legacyFormatVersion
	data, err := json.Marshal(&c)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, LegacyStateFile), data, 0o644)
}
