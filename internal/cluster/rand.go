package cluster

import "strings"

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
func (r *Rand) String(n int) string { return r.appendString("", n) }

// appendString is prefix followed by n characters from the generateName
// alphabet, built in one allocation: every pod, its token volume and
// every event name is drawn here (docs/simulation-speed.md#pod-creation-session-24).
func (r *Rand) appendString(prefix string, n int) string {
	var b strings.Builder
	b.Grow(len(prefix) + n)
	b.WriteString(prefix)
	for range n {
		b.WriteByte(nameAlphabet[r.Intn(len(nameAlphabet))])
	}
	return b.String()
}

// UID returns an RFC 4122-shaped (version 4) UID from the next two draws:
// the groups %08x-%04x-4%03x-%04x-%012x of the draws' bits, written by
// hand rather than through fmt (TestUIDMatchesSprintf).
func (r *Rand) UID() string {
	a, b := r.Uint64(), r.Uint64()
	var buf [36]byte
	putHex(buf[0:8], uint64(uint32(a>>32)))
	buf[8] = '-'
	putHex(buf[9:13], uint64(uint16(a>>16)))
	buf[13] = '-'
	buf[14] = '4'
	putHex(buf[15:18], uint64(uint16(a)&0xfff))
	buf[18] = '-'
	putHex(buf[19:23], uint64((uint16(b>>48)&0x3fff)|0x8000))
	buf[23] = '-'
	putHex(buf[24:36], b&0xffffffffffff)
	return string(buf[:])
}

// putHex writes v in lower-case hex into dst, zero-padded to len(dst).
func putHex(dst []byte, v uint64) {
	const digits = "0123456789abcdef"
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = digits[v&0xf]
		v >>= 4
	}
}

// GenerateName appends five random characters to base as the API server does
// for metadata.generateName (base truncated to 58 characters).
func (s *State) GenerateName(base string) string {
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return s.Rand.appendString(base, 5)
}
