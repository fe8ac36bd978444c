package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/store"
)

// Settled is the state's record that its controllers had nothing left to
// do: a pass of every controller over the state at ResourceVersion, with
// the clock at At, changed nothing. Controllers announce the work they
// have later with timers (internal/sim), so until the next timer, or Until
// when a controller's passes follow the clock on their own (a kubelet's
// lease renewal ticks), a later pass over the same state would change
// nothing either: `advance` then only moves the clock
// (docs/state.md#idle-advance).
type Settled struct {
	ResourceVersion int64     `json:"resourceVersion"`
	At              time.Time `json:"at"`
	// Until, when set, is the first instant after At at which a pass over
	// this state could change it with no timer due, other than by
	// Heartbeat.
	Until *time.Time `json:"until,omitempty"`
	// Heartbeat, when set, is the first instant after At at which a
	// kubelet renews its lease or posts a heartbeat: the clock alone may
	// move up to it, and past it with only those renewals (which nothing
	// else in the model watches) up to Until.
	Heartbeat *time.Time `json:"heartbeat,omitempty"`
}

// Idleness is how much of a pass an advance needs (IdleThrough).
type Idleness int

const (
	// NotIdle: the controllers must run.
	NotIdle Idleness = iota
	// ClockOnly: only the clock moves.
	ClockOnly
	// HeartbeatsOnly: the clock moves and the kubelets renew their leases
	// and post heartbeats (LoadHead with nodes, kubelet.Beat).
	HeartbeatsOnly
)

// settledPass is the last pass of this process that changed nothing, or
// the loaded record (resumed).
type settledPass struct {
	rv      int64
	now     time.Time
	resumed bool
}

// MarkSettled notes that a pass of every controller over the state as it
// is now changed nothing (sim.RunNow).
func (s *State) MarkSettled() { s.settledAt = &settledPass{rv: s.ResourceVersion, now: s.Now} }

// ResumeSettled is called when a command is about to change the state: the
// record is dropped (only a save right after a settled pass writes one),
// and when it matches the state and says that no controller follows the
// clock right away (Until after At), it becomes this process's mark: a
// pass at this very clock over this very state would change nothing
// (Resumed) until the command writes or the clock moves.
func (s *State) ResumeSettled() {
	r := s.Settled
	s.Settled, s.settledAt = nil, nil
	if r != nil && r.ResourceVersion == s.ResourceVersion && r.At.Equal(s.Now) && (r.Until == nil || r.Until.After(r.At)) {
		s.settledAt = &settledPass{rv: r.ResourceVersion, now: r.At, resumed: true}
	}
}

// Resumed reports whether the state is still as the loaded record says it
// settled (ResumeSettled): same resource version, same clock.
func (s *State) Resumed() bool { return s.settledHere() && s.settledAt.resumed }

// settledHere reports whether the last settled pass (or the resumed
// record) is at the state's resource version and clock.
func (s *State) settledHere() bool {
	p := s.settledAt
	return p != nil && p.rv == s.ResourceVersion && p.now.Equal(s.Now)
}

// SealSettled sets Settled for the save that follows: from this process's
// last settled pass when neither the resource version nor the clock has
// moved since, with until and heartbeat (called only then) giving Until and
// Heartbeat (false: no such instant); nil otherwise.
func (s *State) SealSettled(until, heartbeat func(*State) (time.Time, bool)) {
	if !s.settledHere() {
		s.Settled = nil
		return
	}
	s.Settled = &Settled{ResourceVersion: s.ResourceVersion, At: s.Now}
	if t, ok := until(s); ok {
		s.Settled.Until = &t
	}
	if t, ok := heartbeat(s); ok {
		s.Settled.Heartbeat = &t
	}
}

// IdleThrough reports how much of a pass moving the clock to end needs:
// none when the state is recorded settled as it is now, no timer is due by
// end and end comes before Until and Heartbeat; only the kubelets'
// renewals when end reaches Heartbeat but not Until; else all of it.
func (s *State) IdleThrough(end time.Time) Idleness {
	r := s.Settled
	if r == nil || r.ResourceVersion != s.ResourceVersion || !r.At.Equal(s.Now) || end.Before(s.Now) {
		return NotIdle
	}
	if r.Until != nil && !end.Before(*r.Until) {
		return NotIdle
	}
	for _, t := range s.Timers {
		if !t.At.After(end) {
			return NotIdle
		}
	}
	if r.Heartbeat != nil && !end.Before(*r.Heartbeat) {
		return HeartbeatsOnly
	}
	return ClockOnly
}

// headFields are the meta entries LoadHead reads.
var headFields = []string{"formatVersion", "info", "now", "resourceVersion", "timers", "settled"}

// beatBuckets are the buckets a head loaded with its nodes holds: what the
// kubelets' renewals change.
var beatBuckets = []string{"nodes", "leases.coordination.k8s.io"}

// LoadHead reads only the state's head from dir's database: the clock,
// resource version, timers, settled record and cluster info, no event and
// no object but, with nodes, the nodes and leases. The state is Partial;
// SaveHead writes its clock back, and the nodes and leases that changed. A
// directory without a database (none yet, or a legacy state.json) is an
// error wrapping fs.ErrNotExist.
func LoadHead(dir string, nodes bool) (*State, error) {
	path := filepath.Join(dir, StateDB)
	l := stateLayout()
	s := &State{}
	memo := newMemo(path)
	want := func(b string) bool { return b == metaBucket || (nodes && slices.Contains(beatBuckets, b)) }
	err := store.Read(path, want, func(b map[string][]store.KV) error {
		meta := slices.DeleteFunc(b[metaBucket], func(kv store.KV) bool { return !slices.Contains(headFields, string(kv.Key)) })
		if err := s.readMeta(l, meta, memo); err != nil {
			return err
		}
		if !nodes {
			return nil
		}
		return s.readObjects(l, b, memo)
	})
	if err != nil {
		return nil, err
	}
	s.init()
	s.head, s.partial = true, true
	if nodes {
		s.stored = memo
	}
	return s, nil
}

// SaveHead writes a head's clock and settled record to dir's database, and
// the nodes and leases whose encoding changed when it was loaded with them,
// in one transaction, as a whole save writes those entries.
func (s *State) SaveHead(dir string) error {
	if !s.head {
		return errors.New("cluster: SaveHead of a state that is not a head")
	}
	now, err := json.Marshal(s.Now)
	if err != nil {
		return err
	}
	settled, err := json.Marshal(s.Settled)
	if err != nil {
		return err
	}
	changes := []store.Change{{Bucket: metaBucket, Put: []store.KV{
		{Key: []byte("now"), Value: now},
		{Key: []byte("settled"), Value: settled},
	}}}
	if s.stored != nil {
		objs, err := s.beatChanges()
		if err != nil {
			return err
		}
		changes = append(changes, objs...)
	}
	return store.Write(filepath.Join(dir, StateDB), changes)
}

// beatChanges are the nodes and leases whose encoding differs from the
// loaded one. Renewals neither add nor remove objects.
func (s *State) beatChanges() ([]store.Change, error) {
	l := stateLayout()
	v := reflect.ValueOf(s).Elem()
	var changes []store.Change
	for _, ob := range l.objects {
		if !slices.Contains(beatBuckets, ob.name) {
			continue
		}
		old := s.stored.objects[ob.name]
		m := v.Field(ob.field)
		if m.Len() != len(old) {
			return nil, fmt.Errorf("cluster: %s were added or removed in a head", ob.name)
		}
		c := store.Change{Bucket: ob.name}
		var buf []byte
		keys := make([]string, 0, m.Len())
		for _, k := range m.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		for _, k := range keys {
			was, ok := old[k]
			if !ok {
				return nil, fmt.Errorf("cluster: %s %q was added in a head", ob.name, k)
			}
			obj := m.MapIndex(reflect.ValueOf(k)).Interface().(runtime.Object)
			data, err := store.AppendEncoded(buf[:0], obj, ob.kind.GVK)
			if err != nil {
				return nil, fmt.Errorf("%s %q: %w", ob.name, k, err)
			}
			buf = data
			if store.Hash(data) != was {
				c.Put = append(c.Put, store.KV{Key: []byte(k), Value: bytes.Clone(data)})
			}
		}
		if len(c.Put) > 0 {
			changes = append(changes, c)
		}
	}
	return changes, nil
}
