package cluster

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// marshalMeta is json.Marshal of a meta entry. createRevisions holds an
// entry per live object (five megabytes of JSON at 100,000 pods), and
// encoding/json spends half a second on it through reflection: it is
// written here instead, byte for byte as encoding/json writes it (keys
// in order, integers in decimal), and left to encoding/json when a key
// holds a character it would escape (docs/state.md#speed).
func marshalMeta(v any) ([]byte, error) {
	if m, ok := v.(map[types.UID]int64); ok {
		if data, ok := marshalRevisions(m); ok {
			return data, nil
		}
	}
	return json.Marshal(v)
}

// marshalRevisions writes m as a JSON object; ok is false when a key
// needs escaping.
func marshalRevisions(m map[types.UID]int64) (data []byte, ok bool) {
	if m == nil {
		return []byte("null"), true
	}
	type entry struct {
		key string
		rev int64
	}
	entries := make([]entry, 0, len(m))
	size := 2
	for k, rev := range m {
		if !plainJSONString(string(k)) {
			return nil, false
		}
		entries = append(entries, entry{string(k), rev})
		size += len(k) + 4 + 20
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	for i, e := range entries {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = append(buf, e.key...)
		buf = append(buf, '"', ':')
		buf = strconv.AppendInt(buf, e.rev, 10)
	}
	return append(buf, '}'), true
}

// plainJSONString: encoding/json writes s between quotes unchanged (printable
// ASCII other than the quote, the backslash and the HTML characters it
// escapes).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
