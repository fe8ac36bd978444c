package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// goodState is a small valid state in its legacy state.json form.
func goodState(t *testing.T) []byte {
	t.Helper()
	s := New("1.33", 3)
	s.FormatVersion = legacyFormatVersion
	s.Nodes["n1"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	s.Pods["default/web"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	s.Events = []*corev1.Event{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web.1"}}}
	s.Scheduler.Queue["default/web"] = &QueuedPod{Attempts: 1}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDecodeDamaged replaces parts of a valid state with damaged values and
// checks that each is refused with a message naming the entry.
func TestDecodeDamaged(t *testing.T) {
	good := goodState(t)
	if _, err := decode(good); err != nil {
		t.Fatalf("the valid state is refused: %v", err)
	}
	// set replaces the JSON value at a path of object keys (an int indexes
	// an array) with raw JSON.
	set := func(raw string, path ...any) []byte {
		var m any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatal(err)
		}
		cur := m
		for i, p := range path {
			last := i == len(path)-1
			switch k := p.(type) {
			case string:
				if last {
					cur.(map[string]any)[k] = v
				} else {
					cur = cur.(map[string]any)[k]
				}
			case int:
				if last {
					cur.([]any)[k] = v
				} else {
					cur = cur.([]any)[k]
				}
			}
		}
		data, _ := json.Marshal(m)
		return data
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)-1], "not a berth state file: the file is truncated"},
		{"garbage", []byte("berth"), "not a berth state file: invalid character"},
		{"string", []byte(`"state"`), "not a berth state file: json: cannot unmarshal string"},
		{"null", []byte("null"), "the top level is null"},
		{"no formatVersion", bytes.Replace(good, []byte(`"formatVersion":1,`), nil, 1), "no formatVersion"},
		{"formatVersion 2", set("2", "formatVersion"), "state format version 2, this berth reads version 1"},
		{"formatVersion 0", set("0", "formatVersion"), "state format version 0"},
		{"formatVersion float", set("1.5", "formatVersion"), "formatVersion is 1.5, not a number"},
		{"info null", set("null", "info"), "info is missing or null"},
		{"info string", set(`"x"`, "info"), "cannot unmarshal string into Go struct field State.info"},
		{"version empty", set(`""`, "info", "kubernetesVersion"), `info.kubernetesVersion: invalid Kubernetes version ""`},
		{"pods null entry", set("null", "pods", "default/web"), `pods["default/web"] is null`},
		{"nodes null entry", set("null", "nodes", "n1"), `nodes["n1"] is null`},
		{"pods array", set("[]", "pods"), "cannot unmarshal array into Go struct field State.pods"},
		{"pods null map", set("null", "pods"), ""},
		{"pod string", set(`"web"`, "pods", "default/web"), "cannot unmarshal string into Go struct field State.pods"},
		{"pod wrong key", set(`{"metadata":{"namespace":"default","name":"api"}}`, "pods", "default/web"), `pods["default/web"] holds an object whose namespace/name is "default/api"`},
		{"pod no namespace", set(`{"metadata":{"name":"web"}}`, "pods", "default/web"), `pods["default/web"] holds an object whose namespace/name is "/web"`},
		{"node wrong key", set(`{"metadata":{"name":"n2"}}`, "nodes", "n1"), `nodes["n1"] holds an object whose name is "n2"`},
		{"node no name", set(`{}`, "nodes", "n1"), `nodes["n1"] has no metadata.name`},
		{"event null", set("null", "events", 0), "events[0] is null"},
		{"queue null entry", set("null", "scheduler", "queue", "default/web"), `scheduler.queue["default/web"] is null`},
		{"now wrong type", set("5", "now"), "now: Time.UnmarshalJSON: input is not a JSON string"},
		{"now early", set(`"2025-12-31T23:59:59Z"`, "now"), "before virtual time zero"},
		{"seed string", set(`"1"`, "seed"), "cannot unmarshal string into Go struct field State.seed"},
		{"rand null", set("null", "rand"), ""},
		{"timers object", set("{}", "timers"), "cannot unmarshal object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := decode(c.data)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want == "" && s.Pods == nil:
				t.Errorf("maps not initialised")
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestDecodeNeverPanics cuts a valid state at every length and flips bytes
// through it: decode must return a state or an error, never panic, and a
// state it returns has no null entries.
func TestDecodeNeverPanics(t *testing.T) {
	good := goodState(t)
	try := func(what string, data []byte) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: panic: %v", what, r)
			}
		}()
		s, err := decode(data)
		if err == nil {
			for k, p := range s.Pods {
				if p == nil {
					t.Fatalf("%s: pods[%q] accepted as null", what, k)
				}
			}
		}
	}
	for n := 0; n < len(good); n++ {
		try(fmt.Sprintf("cut at %d", n), good[:n])
	}
	for i := 0; i < len(good); i++ {
		for _, b := range []byte{'n', '"', '{', ']', '0', ':'} {
			data := bytes.Clone(good)
			data[i] = b
			try(fmt.Sprintf("byte %d set to %q", i, b), data)
		}
	}
}
