package provisioning

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// valuesError is an error with structured values, printed as Karpenter's
// structured errors print: "message (key=value, key2=value2)", keys sorted.
type valuesError struct {
	err    error
	values map[string]string
}

func withValues(err error, kv ...string) error {
	e := &valuesError{err: err, values: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		e.values[kv[i]] = kv[i+1]
	}
	return e
}

func (e *valuesError) Error() string {
	keys := make([]string, 0, len(e.values))
	for k := range e.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	elems := make([]string, len(keys))
	for i, k := range keys {
		elems[i] = k + "=" + e.values[k]
	}
	return fmt.Sprintf("%s (%s)", e.err.Error(), strings.Join(elems, ", "))
}

func (e *valuesError) Unwrap() error { return e.err }

// combined joins errors on one line with "; ", as Karpenter's multierr
// does; nil errors are skipped and a single error is returned as it is.
func combine(errs ...error) error {
	var kept []error
	for _, err := range errs {
		if err == nil {
			continue
		}
		var c combined
		if errors.As(err, &c) {
			kept = append(kept, c...)
			continue
		}
		kept = append(kept, err)
	}
	switch len(kept) {
	case 0:
		return nil
	case 1:
		return kept[0]
	}
	return combined(kept)
}

type combined []error

func (c combined) Error() string {
	parts := make([]string, len(c))
	for i, err := range c {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (c combined) Unwrap() []error { return c }
