package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// StateFile is the name of the state file inside the state directory.
const StateFile = "state.json"

// ErrNoState is returned by Load when the directory holds no state yet.
var ErrNoState = errors.New("no cluster state")

// Load reads the state from dir. A missing file yields ErrNoState.
func Load(dir string) (*State, error) {
	path := filepath.Join(dir, StateFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoState
	}
	if err != nil {
		return nil, err
	}
	s, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Save writes the state to dir atomically: a temporary file in the same
// directory, synced, then renamed over the old one. A crash leaves either the
// old state or the new one, never a torn file.
func (s *State) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s.pruneCreateRevisions()
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, StateFile+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, StateFile))
}

// Clone returns a deep copy through the persisted form; used to roll back a
// failed apply and by tests.
func (s *State) Clone() *State {
	data, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	c := &State{}
	if err := json.Unmarshal(data, c); err != nil {
		panic(err)
	}
	c.init()
	return c
}
