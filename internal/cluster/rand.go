package cluster

import "fmt"

// Rand is the cluster's one source of randomness: a splitmix64 generator whose
// whole state is a single persisted word, so a run resumed from disk draws the
// same numbers as one that never stopped.
type Rand struct {
	State uint64 `json:"state"`
}

// NewRand seeds a generator.
func NewRand(seed int64) Rand { return Rand{State: uint64(seed)*0x9E3779B97F4A7C15 + 1} }

// Uint64 returns the next pseudo-random number.
func (r *Rand) Uint64() uint64 {
	r.State += 0x9E3779B97F4A7C15
	z := r.State
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Intn returns a number in [0, n).
func (r *Rand) Intn(n int) int {
	if n <= 1 {
		return 0
	}
	return int(r.Uint64() % uint64(n))
}

// nameAlphabet is the API server's generateName alphabet (no vowels, no
// look-alike digits): k8s.io/apimachinery/pkg/util/rand.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// String returns n characters from the generateName alphabet.
func (r *Rand) String(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = nameAlphabet[r.Intn(len(nameAlphabet))]
	}
	return string(b)
}

// UID returns an RFC 4122-shaped (version 4) UID from the next two draws.
func (r *Rand) UID() string {
	a, b := r.Uint64(), r.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a)&0xfff, (uint16(b>>48)&0x3fff)|0x8000, b&0xffffffffffff)
}

// GenerateName appends five random characters to base as the API server does
// for metadata.generateName (base truncated to 58 characters).
func (s *State) GenerateName(base string) string {
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return base + s.Rand.String(5)
}
