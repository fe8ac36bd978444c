package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/store"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := New("1.30", 7)
	s.Nodes["n1"] = &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"a": "b"}}}
	s.NodePools["default"] = &karpv1.NodePool{TypeMeta: metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodePool"}, ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	s.Record(EventSource{Component: "kubelet"}, corev1.ObjectReference{Kind: "Node", Name: "n1"}, corev1.EventTypeNormal, "Starting", "Starting kubelet.")
	first := s.Rand.Uint64()
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Info.KubernetesVersion != "1.30" || !reflect.DeepEqual(got.Nodes, s.Nodes) || !reflect.DeepEqual(got.NodePools, s.NodePools) {
		t.Errorf("round trip lost data: %+v %+v", got.Info, got.Nodes["n1"])
	}
	if len(got.Events) != 1 || got.Events[0].Message != "Starting kubelet." {
		t.Errorf("events %v", got.Events)
	}
	// The random source resumes where it stopped.
	if a, b := s.Rand.Uint64(), got.Rand.Uint64(); a != b || a == first {
		t.Errorf("random source did not resume: %d vs %d", a, b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != StateDB {
		t.Errorf("state dir holds %v, want only %s (no temporary files left)", entries, StateDB)
	}
}

// dbContents is every bucket's keys and values.
func dbContents(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	err := store.Read(filepath.Join(dir, StateDB), nil, func(b map[string][]store.KV) error {
		for name, kvs := range b {
			m := map[string]string{}
			for _, kv := range kvs {
				m[string(kv.Key)] = string(kv.Value)
			}
			out[name] = m
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSaveIsIncremental: a save after a load writes only what changed,
// finds changes made in place without a resourceVersion bump, removes
// deleted objects and keeps the event log in order; the result reads back
// the same as a complete write of the same state.
func TestSaveIsIncremental(t *testing.T) {
	dir := t.TempDir()
	s := syntheticState(20, 40, 100)
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var puts []string
	store.SetTestHook(nil)
	changes := func() []string {
		puts = nil
		old := s.stored
		next := newMemo(old.path)
		l := stateLayout()
		cs, _ := s.objectChanges(l, old, next, false)
		for _, c := range cs {
			for _, kv := range c.Put {
				puts = append(puts, c.Bucket+" put "+string(kv.Key))
			}
			for _, k := range c.Delete {
				puts = append(puts, c.Bucket+" delete "+string(k))
			}
		}
		return puts
	}
	if got := changes(); len(got) != 0 {
		t.Fatalf("an unchanged state writes %v", got)
	}
	node := s.Nodes[SortedKeys(s.Nodes)[3]]
	node.Labels["changed"] = "in-place" // no resourceVersion bump
	delete(s.Pods, "default/web-7")
	if got, want := changes(), []string{"nodes put " + node.Name, "pods delete default/web-7"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	s.Now = s.Now.Add(1e9)
	s.Record(EventSource{Component: "kubelet"}, corev1.ObjectReference{Kind: "Node", Name: node.Name}, corev1.EventTypeNormal, "New", "a new event")
	s.Events = append(s.Events[:10], s.Events[11:]...)
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	if err := s.Clone().Save(full); err != nil {
		t.Fatal(err)
	}
	a, b := dbContents(t, dir), dbContents(t, full)
	// Event keys differ (the incremental log keeps its numbers); compare
	// the log in order.
	if !reflect.DeepEqual(eventValues(a), eventValues(b)) {
		t.Errorf("incremental event log differs from a complete write")
	}
	delete(a, eventsBucket)
	delete(b, eventsBucket)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("incremental save differs from a complete write")
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != len(s.Events) || got.Events[len(got.Events)-1].Message != "a new event" || got.Events[10].Name != s.Events[10].Name {
		t.Errorf("event log after incremental save: %d events", len(got.Events))
	}
}

func eventValues(db map[string]map[string]string) []string {
	events := db[eventsBucket]
	var out []string
	for _, k := range SortedKeys(events) {
		out = append(out, events[k])
	}
	return out
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); !errors.Is(err, ErrNoState) {
		t.Errorf("empty dir: %v, want ErrNoState", err)
	}
	path := filepath.Join(dir, StateDB)
	if err := os.WriteFile(path, []byte("not a database, just some bytes that are long enough to look at................................"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a berth state database") {
		t.Errorf("garbage file: %v", err)
	}
	os.Remove(path)
	if err := store.Create(path, []store.Change{{Bucket: metaBucket, Put: []store.KV{{Key: []byte("formatVersion"), Value: []byte("99")}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), path+": state format version 99 is newer than this berth reads (version 2)") {
		t.Errorf("future format: %v, want the file and version named", err)
	}
	os.Remove(path)
	if err := os.WriteFile(filepath.Join(dir, LegacyStateFile), []byte(`{`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a berth state file") {
		t.Errorf("torn legacy file: %v", err)
	}
}

// TestUpgradeFromJSON: a legacy state.json loads, saves as the database and
// is then renamed, and the database holds the same state.
func TestUpgradeFromJSON(t *testing.T) {
	dir := t.TempDir()
	s := syntheticState(5, 10, 20)
	if err := s.SaveLegacyJSON(dir); err != nil {
		t.Fatal(err)
	}
	legacy, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !legacy.NeedsUpgrade() {
		t.Fatal("a state read from state.json does not ask for an upgrade")
	}
	if err := legacy.Save(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LegacyStateFile+MigratedSuffix)); err != nil {
		t.Errorf("legacy file not renamed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, LegacyStateFile)); err == nil {
		t.Errorf("legacy file still there")
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.NeedsUpgrade() || !reflect.DeepEqual(got.Pods, legacy.Pods) || !reflect.DeepEqual(got.Events, legacy.Events) || !got.Now.Equal(legacy.Now) {
		t.Errorf("the database does not hold the upgraded state")
	}
}

// TestCloneIsIndependent: changing a clone leaves the original alone.
func TestCloneIsIndependent(t *testing.T) {
	s := syntheticState(3, 3, 3)
	c := s.Clone()
	if !reflect.DeepEqual(c.Pods, s.Pods) || !reflect.DeepEqual(c.Events, s.Events) || c.Rand != s.Rand {
		t.Fatal("clone differs from the original")
	}
	for _, p := range c.Pods {
		p.Labels["x"] = "y"
	}
	c.Events[0].Count = 99
	c.Rand.Uint64()
	for _, p := range s.Pods {
		if p.Labels["x"] != "" {
			t.Fatal("clone shares pods")
		}
	}
	if s.Events[0].Count == 99 || c.Rand == s.Rand {
		t.Fatal("clone shares events or the random source")
	}
}

func TestRandIsDeterministic(t *testing.T) {
	a, b := NewRand(42), NewRand(42)
	for i := 0; i < 100; i++ {
		if a.Uint64() != b.Uint64() {
			t.Fatal("same seed, different sequence")
		}
	}
	c, d := NewRand(43), NewRand(42)
	if d.Uint64() == c.Uint64() {
		t.Error("different seeds gave the same first number")
	}
	s := New("", 1)
	name := s.GenerateName("ui-659df48c56-")
	if len(name) != len("ui-659df48c56-")+5 || strings.ContainsAny(name[len(name)-5:], "aeiou013") {
		t.Errorf("GenerateName = %q", name)
	}
	uid := s.NewUID()
	if len(uid) != 36 || uid[14] != '4' {
		t.Errorf("NewUID = %q, want an RFC 4122 version-4 shape", uid)
	}
}

// TestEventLogSaves: the event log reads back in order after each kind of
// change an incremental save meets: events folded into and appended, one
// removed, the same event twice, two swapped.
func TestEventLogSaves(t *testing.T) {
	dir := t.TempDir()
	if err := syntheticState(2, 5, 20).Save(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	messages := func(events []*corev1.Event) []string {
		var out []string
		for _, e := range events {
			out = append(out, fmt.Sprint(e.Message, " x", e.Count))
		}
		return out
	}
	for _, change := range []struct {
		name string
		f    func()
	}{
		{"fold and append", func() {
			s.Events[3].Count = 7
			s.Record(EventSource{Component: "t"}, corev1.ObjectReference{Kind: "Node", Name: "n"}, corev1.EventTypeNormal, "A", "appended")
		}},
		{"remove", func() { s.Events = append(s.Events[:5:5], s.Events[6:]...) }},
		{"twice", func() { s.Events = append(s.Events, s.Events[0]) }},
		{"swap", func() { s.Events[1], s.Events[2] = s.Events[2], s.Events[1] }},
		{"append after reorder", func() {
			s.Record(EventSource{Component: "t"}, corev1.ObjectReference{Kind: "Node", Name: "m"}, corev1.EventTypeNormal, "B", "last")
		}},
	} {
		change.f()
		if err := s.Save(dir); err != nil {
			t.Fatal(err)
		}
		got, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if want := messages(s.Events); !reflect.DeepEqual(messages(got.Events), want) {
			t.Fatalf("after %s: log %v, want %v", change.name, messages(got.Events), want)
		}
	}
}
