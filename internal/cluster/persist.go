package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/berth-sim/berth/internal/store"
)

// StateDB is the state database inside the state directory (docs/state.md).
const StateDB = "state.db"

// LegacyStateFile is the JSON state file of berth before the database; a
// directory holding one is upgraded on the next write (docs/state.md#upgrade).
const LegacyStateFile = "state.json"

// MigratedSuffix is appended to the legacy file's name once it is upgraded.
const MigratedSuffix = ".migrated"

// ErrNoState is returned by Load when the directory holds no state yet.
var ErrNoState = errors.New("no cluster state")

// Load reads the state from dir: the database, or a legacy state.json
// when no database exists yet (NeedsUpgrade then says so). A directory with
// neither yields ErrNoState. Every error names the file it is about.
func Load(dir string) (*State, error) { return load(dir, nil) }

// Scope is the part of the stored state a read-only command loads
// (LoadSome, docs/state.md#speed). Its zero value loads every object and
// no event.
type Scope struct {
	// Kinds lists the kinds to load; nil loads every kind. The maps of the
	// others are left empty.
	Kinds []*Kind
	// Objects, for a kind, picks the objects to load by their stored key
	// and encoding, without decoding the others; a kind without an entry
	// is loaded whole.
	Objects map[*Kind]func(key, value []byte) bool
	// Events picks the events to load by their involved object's name;
	// nil loads none.
	Events func(name string) bool
}

// LoadSome is Load for a read-only command that prints part of the
// cluster (`get` of most kinds, `describe` of named pods and nodes): only
// what scope names is decoded, and the state cannot be saved or changed
// (Partial). A legacy state.json is read whole.
func LoadSome(dir string, scope Scope) (*State, error) { return load(dir, &scope) }

func load(dir string, scope *Scope) (*State, error) {
	path := filepath.Join(dir, StateDB)
	s, err := loadDB(path, scope)
	if errors.Is(err, fs.ErrNotExist) {
		return loadLegacy(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// loadLegacy reads a state.json written by an earlier berth.
func loadLegacy(dir string) (*State, error) {
	path := filepath.Join(dir, LegacyStateFile)
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
	s.FormatVersion = FormatVersion
	s.legacy = true
	return s, nil
}

// NeedsUpgrade reports whether s was read from a legacy state.json; the
// first command that holds the state exclusively saves it as the database.
func (s *State) NeedsUpgrade() bool { return s.legacy }

// Save writes the state to dir's database in one transaction: only the
// objects and fields that changed since the state was loaded or last saved
// there; everything when the state did not come from that database. A crash
// leaves the previous state or the new one, never a mix (docs/state.md).
// Once saved, a legacy state.json is renamed state.json.migrated.
func (s *State) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s.pruneCreateRevisions()
	s.FormatVersion = FormatVersion
	path := filepath.Join(dir, StateDB)
	if err := s.saveDB(path); err != nil {
		return fmt.Errorf("saving %s: %w", path, err)
	}
	s.legacy = false
	legacy := filepath.Join(dir, LegacyStateFile)
	if _, err := os.Stat(legacy); err == nil {
		if err := os.Rename(legacy, legacy+MigratedSuffix); err != nil {
			return err
		}
		return store.SyncDir(dir)
	}
	return nil
}

// Remove deletes the state in dir (database and legacy file, and a
// temporary database a crash left half-written); `berth reset`.
func Remove(dir string) error {
	temps, _ := filepath.Glob(filepath.Join(dir, StateDB+".*.tmp"))
	for _, name := range append([]string{StateDB, LegacyStateFile}, temps...) {
		name = filepath.Base(name)
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
