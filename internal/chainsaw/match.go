package chainsaw

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Mismatch is one place where an actual object differs from the expected
// one: its YAML path, both values and why they differ.
type Mismatch struct {
	Path     string
	Expected any
	Actual   any
	// Reason is set for structural differences (a missing field, arrays
	// of different lengths); empty means the values differ.
	Reason string
}

func (m Mismatch) String() string {
	switch {
	case m.Reason != "":
		return fmt.Sprintf("%s: %s", m.Path, m.Reason)
	default:
		return fmt.Sprintf("%s: expected %s, got %s", m.Path, render(m.Expected), render(m.Actual))
	}
}

// render prints a value the way it would be written in YAML flow style.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ErrUnsupportedKey is a Chainsaw assertion-tree key berth cannot evaluate
// (a JMESPath expression or an iteration), refused instead of guessed.
type ErrUnsupportedKey struct{ Path, Key string }

func (e *ErrUnsupportedKey) Error() string {
	return fmt.Sprintf("%s: key %q is a Chainsaw expression; berth test matches plain fields only (docs/berth-test.md#matching)", e.Path, e.Key)
}

// Match compares actual against expected with Chainsaw's default
// assertion-tree rules (docs/berth-test.md#matching): a map matches when
// every expected field is present and matches (extra actual fields are
// ignored); an array matches when it has the same length and matches
// element by element, in order; scalars match when equal, numbers by
// value. It returns every mismatch, in path order.
func Match(expected, actual any) ([]Mismatch, error) {
	var out []Mismatch
	err := match("", expected, actual, &out)
	return out, err
}

func match(path string, expected, actual any, out *[]Mismatch) error {
	switch exp := expected.(type) {
	case map[string]any:
		act, ok := actual.(map[string]any)
		if !ok {
			*out = append(*out, Mismatch{Path: orRoot(path), Expected: expected, Actual: actual, Reason: fmt.Sprintf("expected a map, got %s", typeName(actual))})
			return nil
		}
		keys := make([]string, 0, len(exp))
		for k := range exp {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.HasPrefix(k, "(") || strings.HasPrefix(k, "~") || strings.HasPrefix(k, "$") {
				return &ErrUnsupportedKey{Path: orRoot(path), Key: k}
			}
			sub := joinPath(path, k)
			av, present := act[k]
			if !present {
				if exp[k] == nil {
					continue // an expected null matches an absent field
				}
				*out = append(*out, Mismatch{Path: sub, Expected: exp[k], Reason: "field is missing, expected " + render(exp[k])})
				continue
			}
			if err := match(sub, exp[k], av, out); err != nil {
				return err
			}
		}
	case []any:
		act, ok := actual.([]any)
		if !ok {
			*out = append(*out, Mismatch{Path: orRoot(path), Expected: expected, Actual: actual, Reason: fmt.Sprintf("expected an array, got %s", typeName(actual))})
			return nil
		}
		if len(act) != len(exp) {
			*out = append(*out, Mismatch{Path: orRoot(path), Expected: expected, Actual: actual,
				Reason: fmt.Sprintf("expected %d element(s), got %d: %s", len(exp), len(act), render(actual))})
			return nil
		}
		for i := range exp {
			if err := match(fmt.Sprintf("%s[%d]", path, i), exp[i], act[i], out); err != nil {
				return err
			}
		}
	default:
		if !scalarEqual(expected, actual) {
			*out = append(*out, Mismatch{Path: orRoot(path), Expected: expected, Actual: actual})
		}
	}
	return nil
}

// scalarEqual compares leaves; YAML integers and JSON floats that hold the
// same number are equal.
func scalarEqual(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return a == b
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a map"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	if _, ok := number(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func joinPath(path, key string) string {
	if strings.ContainsAny(key, ".[] ") {
		key = "[" + strconv.Quote(key) + "]"
		return path + key
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}
