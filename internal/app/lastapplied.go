package app

import (
	"bytes"
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/manifest"
)

// lastApplied renders the manifest as kubectl records it: the document as
// written (keys sorted, compact), with the namespace it is applied to.
func lastApplied(o manifest.Object, m metav1.Object) (string, error) {
	if s, ok := lastAppliedCanonical(o.Raw, o.Canonical, m.GetNamespace()); ok {
		return s, nil
	}
	return lastAppliedDecoded(o, m)
}

// lastAppliedDecoded is the reference rendering: decode the document into
// a map, set metadata.namespace, marshal it again.
func lastAppliedDecoded(o manifest.Object, m metav1.Object) (string, error) {
	var doc map[string]any
	if err := json.Unmarshal(o.Raw, &doc); err != nil || doc == nil {
		data, err := json.Marshal(o.Object)
		return string(data) + "\n", err
	}
	if meta, ok := doc["metadata"].(map[string]any); ok && m.GetNamespace() != "" {
		meta["namespace"] = m.GetNamespace()
	}
	data, err := json.Marshal(doc)
	return string(data) + "\n", err
}

// lastAppliedCanonical produces lastAppliedDecoded's bytes without decoding
// when raw is already encoding/json's rendering of a map (every YAML
// document is): decoding and re-encoding such JSON gives it back unchanged
// (same key order, same string escapes, and numbers survive the trip
// through float64 when they are floats already or integers of at most 15
// digits), so only metadata.namespace has to be put in. ok is false when
// that argument does not hold and the caller must decode
// (docs/manifest-decoding.md).
func lastAppliedCanonical(raw []byte, canonical bool, namespace string) (string, bool) {
	if !canonical || len(raw) < 2 || raw[0] != '{' || !numbersSurvive(raw) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(raw) + len(namespace) + 16)
	if namespace == "" {
		b.Write(raw)
		b.WriteByte('\n')
		return b.String(), true
	}
	start, _, ok := objectField(raw, 0, "metadata")
	if !ok {
		return "", false
	}
	if start < 0 || raw[start] != '{' {
		// No metadata object: nothing to set.
		b.Write(raw)
		b.WriteByte('\n')
		return b.String(), true
	}
	nsVal, _ := json.Marshal(namespace)
	// Find where "namespace" is or would go among metadata's sorted keys.
	pos := start + 1
	for raw[pos] != '}' {
		keyEnd, ok := skipString(raw, pos)
		if !ok {
			return "", false
		}
		key := raw[pos+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return "", false // escaped key: compare decoded strings the slow way
		}
		valEnd, ok := skipValue(raw, keyEnd+1)
		if !ok {
			return "", false
		}
		switch c := strings.Compare(string(key), "namespace"); {
		case c == 0:
			b.Write(raw[:keyEnd+1])
			b.Write(nsVal)
			b.Write(raw[valEnd:])
			b.WriteByte('\n')
			return b.String(), true
		case c > 0:
			b.Write(raw[:pos])
			b.WriteString(`"namespace":`)
			b.Write(nsVal)
			b.WriteByte(',')
			b.Write(raw[pos:])
			b.WriteByte('\n')
			return b.String(), true
		}
		pos = valEnd
		if raw[pos] == ',' {
			pos++
		}
	}
	b.Write(raw[:pos])
	if pos > start+1 {
		b.WriteByte(',')
	}
	b.WriteString(`"namespace":`)
	b.Write(nsVal)
	b.Write(raw[pos:])
	b.WriteByte('\n')
	return b.String(), true
}

// objectField finds key among the members of the compact JSON object at
// raw[at] and returns the span of its value (start -1 when absent).
func objectField(raw []byte, at int, key string) (start, end int, ok bool) {
	pos := at + 1
	for pos < len(raw) && raw[pos] != '}' {
		keyEnd, ok := skipString(raw, pos)
		if !ok || keyEnd >= len(raw) || raw[keyEnd] != ':' {
			return 0, 0, false
		}
		valEnd, ok := skipValue(raw, keyEnd+1)
		if !ok {
			return 0, 0, false
		}
		if string(raw[pos+1:keyEnd-1]) == key {
			return keyEnd + 1, valEnd, true
		}
		pos = valEnd
		if pos < len(raw) && raw[pos] == ',' {
			pos++
		}
	}
	return -1, -1, pos < len(raw)
}

// skipString returns the index after the JSON string starting at raw[at].
func skipString(raw []byte, at int) (int, bool) {
	if at >= len(raw) || raw[at] != '"' {
		return 0, false
	}
	for i := at + 1; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the index after the compact JSON value at raw[at].
func skipValue(raw []byte, at int) (int, bool) {
	if at >= len(raw) {
		return 0, false
	}
	switch raw[at] {
	case '"':
		return skipString(raw, at)
	case '{', '[':
		depth := 0
		for i := at; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				end, ok := skipString(raw, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	default:
		i := at
		for i < len(raw) && raw[i] != ',' && raw[i] != '}' && raw[i] != ']' {
			i++
		}
		return i, i > at
	}
}

// numbersSurvive reports whether every number in the compact JSON raw comes
// back identical from a decode into float64 and encoding/json's rendering:
// floats as encoding/json wrote them do, and so do integers of at most 15
// digits (exact in a float64, written without an exponent).
func numbersSurvive(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '"' {
			end, ok := skipString(raw, i)
			if !ok {
				return false
			}
			i = end - 1
			continue
		}
		if c != '-' && (c < '0' || c > '9') {
			continue
		}
		j, digits, isFloat := i, 0, false
		for ; j < len(raw); j++ {
			d := raw[j]
			if d >= '0' && d <= '9' {
				digits++
			} else if d == '.' || d == 'e' || d == 'E' || d == '+' {
				isFloat = true
			} else if d != '-' {
				break
			}
		}
		if !isFloat && digits > 15 {
			return false
		}
		i = j - 1
	}
	return true
}
