package cluster

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"time"

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
	// this state could change it with no timer due; the clock alone may
	// move up to it, not onto it.
	Until *time.Time `json:"until,omitempty"`
}

// settledPass is the last pass of this process that changed nothing.
type settledPass struct {
	rv  int64
	now time.Time
}

// MarkSettled notes that a pass of every controller over the state as it
// is now changed nothing (sim.RunNow).
func (s *State) MarkSettled() { s.settledAt = &settledPass{rv: s.ResourceVersion, now: s.Now} }

// ForgetSettled drops the settled record and this process's mark: a
// command is about to change the state, and only a pass that settles it
// again may record it settled.
func (s *State) ForgetSettled() { s.Settled, s.settledAt = nil, nil }

// SealSettled sets Settled for the save that follows: from this process's
// last settled pass when neither the resource version nor the clock has
// moved since, with until (called only then) giving the first instant a
// pass could change the state with no timer due (false: no such instant);
// nil otherwise.
func (s *State) SealSettled(until func(*State) (time.Time, bool)) {
	p := s.settledAt
	if p == nil || p.rv != s.ResourceVersion || !p.now.Equal(s.Now) {
		s.Settled = nil
		return
	}
	s.Settled = &Settled{ResourceVersion: s.ResourceVersion, At: s.Now}
	if t, ok := until(s); ok {
		s.Settled.Until = &t
	}
}

// IdleThrough reports whether moving the clock to end would change nothing
// but the clock: the state is recorded settled as it is now, no timer is
// due by end, and end comes before Until.
func (s *State) IdleThrough(end time.Time) bool {
	r := s.Settled
	if r == nil || r.ResourceVersion != s.ResourceVersion || !r.At.Equal(s.Now) || end.Before(s.Now) {
		return false
	}
	if r.Until != nil && !end.Before(*r.Until) {
		return false
	}
	for _, t := range s.Timers {
		if !t.At.After(end) {
			return false
		}
	}
	return true
}

// headFields are the meta entries LoadHead reads.
var headFields = []string{"formatVersion", "info", "now", "resourceVersion", "timers", "settled"}

// LoadHead reads only the state's head from dir's database: the clock,
// resource version, timers, settled record and cluster info, no object
// and no event. The state is Partial; SaveHead writes its clock back. A
// directory without a database (none yet, or a legacy state.json) is an
// error wrapping fs.ErrNotExist.
func LoadHead(dir string) (*State, error) {
	path := filepath.Join(dir, StateDB)
	s := &State{}
	err := store.Read(path, func(b string) bool { return b == metaBucket }, func(b map[string][]store.KV) error {
		meta := slices.DeleteFunc(b[metaBucket], func(kv store.KV) bool { return !slices.Contains(headFields, string(kv.Key)) })
		return s.readMeta(stateLayout(), meta, newMemo(path))
	})
	if err != nil {
		return nil, err
	}
	s.init()
	s.head, s.partial = true, true
	return s, nil
}

// SaveHead writes a head's clock and settled record to dir's database, in
// one transaction, as a whole save writes those two entries.
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
	path := filepath.Join(dir, StateDB)
	return store.Write(path, []store.Change{{Bucket: metaBucket, Put: []store.KV{
		{Key: []byte("now"), Value: now},
		{Key: []byte("settled"), Value: settled},
	}}})
}
