package cluster

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/version"
)

// decode parses a state file strictly enough that nothing later trips over
// it: the top level must be an object with a known formatVersion, no stored
// object or queue entry may be null, every object must sit under its own
// key, and the cluster info must name a Kubernetes version. Every error names
// the bad entry the way it is spelt in the file.
func decode(data []byte) (*State, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a berth state file: %v", jsonError(err))
	}
	if top == nil {
		return nil, fmt.Errorf("not a berth state file: the top level is null, not an object")
	}
	raw, ok := top["formatVersion"]
	if !ok {
		return nil, fmt.Errorf("not a berth state file: no formatVersion")
	}
	var fv int
	if err := json.Unmarshal(raw, &fv); err != nil {
		return nil, fmt.Errorf("formatVersion is %s, not a number", raw)
	}
	if fv != legacyFormatVersion {
		return nil, fmt.Errorf("state format version %d, this berth reads version %d (run `berth reset`)", fv, legacyFormatVersion)
	}
	if info, ok := top["info"]; !ok || string(info) == "null" {
		return nil, fmt.Errorf("info is missing or null: the cluster's Kubernetes version is unknown")
	}
	s := &State{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fieldError(top, err)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	s.init()
	return s, nil
}

// jsonError says "unexpected end of JSON input" in words a user of a
// truncated file recognises; other decoding errors already name the field.
func jsonError(err error) error {
	if err.Error() == "unexpected end of JSON input" {
		return fmt.Errorf("the file is truncated (unexpected end of JSON input)")
	}
	return err
}

// fieldError names the top-level field whose value failed to decode when
// the decoder's own message does not (a time.Time's, for one).
func fieldError(top map[string]json.RawMessage, err error) error {
	if strings.Contains(err.Error(), "Go struct field") {
		return err
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		one, _ := json.Marshal(map[string]json.RawMessage{k: top[k]})
		if ferr := json.Unmarshal(one, &State{}); ferr != nil {
			return fmt.Errorf("%s: %v", k, ferr)
		}
	}
	return err
}

func (s *State) validate() error {
	if _, err := version.Parse(s.Info.KubernetesVersion); err != nil {
		return fmt.Errorf("info.kubernetesVersion: %v", err)
	}
	if s.Now.Before(Epoch) {
		return fmt.Errorf("now is %s, before virtual time zero (%s)", s.Now.Format("2006-01-02T15:04:05Z07:00"), Epoch.Format("2006-01-02T15:04:05Z07:00"))
	}
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := jsonName(t.Field(i))
		if name == "" {
			continue
		}
		if err := checkEntries(name, v.Field(i)); err != nil {
			return err
		}
	}
	for _, k := range SortedKeys(s.Scheduler.Queue) {
		if s.Scheduler.Queue[k] == nil {
			return fmt.Errorf("scheduler.queue[%q] is null", k)
		}
	}
	return nil
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if !f.IsExported() || tag == "" || tag == "-" {
		return ""
	}
	return strings.Split(tag, ",")[0]
}

// checkEntries refuses null entries in a map or slice of pointers and, for
// stored objects, an entry whose key is not its namespace/name.
func checkEntries(field string, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.Pointer || v.Type().Key().Kind() != reflect.String {
			return nil
		}
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		for _, k := range keys {
			e := v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key()))
			if e.IsNil() {
				return fmt.Errorf("%s[%q] is null", field, k)
			}
			if err := checkKey(field, k, e.Interface()); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Pointer {
			return nil
		}
		for i := 0; i < v.Len(); i++ {
			if v.Index(i).IsNil() {
				return fmt.Errorf("%s[%d] is null", field, i)
			}
		}
	}
	return nil
}

// checkKey holds a stored object to the key it is filed under; lookups by
// key and by name would disagree otherwise.
func checkKey(field, key string, obj any) error {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	if m.GetName() == "" {
		return fmt.Errorf("%s[%q] has no metadata.name", field, key)
	}
	want, what := m.GetName(), "name"
	if ro, ok := obj.(runtime.Object); ok {
		if k := KindOf(ro); k != nil && k.Namespaced {
			want, what = m.GetNamespace()+"/"+m.GetName(), "namespace/name"
		}
	}
	if key != want {
		return fmt.Errorf("%s[%q] holds an object whose %s is %q", field, key, what, want)
	}
	return nil
}
