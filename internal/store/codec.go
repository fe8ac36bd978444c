package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// protoMagic opens every protobuf value, as the API server's storage
// serializer writes it to etcd: "k8s" and a zero byte, then a
// runtime.Unknown holding the type and the object's own encoding.
var protoMagic = []byte{'k', '8', 's', 0}

// Message is a Kubernetes API type with generated protobuf code.
type Message interface {
	runtime.Object
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// IsProto reports whether obj has generated protobuf code; berth's own
// custom-resource types do not, and are stored as JSON as etcd stores CRDs.
func IsProto(obj runtime.Object) bool {
	_, ok := obj.(Message)
	return ok
}

// Encode returns obj's stored form: the protobuf envelope for built-in API
// types, JSON otherwise.
func Encode(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	return AppendEncoded(nil, obj, gvk)
}

// sizedMessage is what generated protobuf code offers for marshalling into
// a buffer of the right size.
type sizedMessage interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// AppendEncoded appends obj's stored form to buf; callers that encode many
// objects reuse one buffer. The envelope is written as runtime.Unknown's
// generated code writes it (empty contentEncoding and contentType included).
func AppendEncoded(buf []byte, obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	m, ok := obj.(sizedMessage)
	if !ok {
		data, err := json.Marshal(obj)
		return append(buf, data...), err
	}
	apiVersion := gvk.GroupVersion().String()
	typeMeta := 2 + uvarintLen(len(apiVersion)) + len(apiVersion) + uvarintLen(len(gvk.Kind)) + len(gvk.Kind)
	size := m.Size()
	buf = append(buf, protoMagic...)
	buf = append(buf, 0x0a)
	buf = binary.AppendUvarint(buf, uint64(typeMeta))
	buf = append(buf, 0x0a)
	buf = binary.AppendUvarint(buf, uint64(len(apiVersion)))
	buf = append(buf, apiVersion...)
	buf = append(buf, 0x12)
	buf = binary.AppendUvarint(buf, uint64(len(gvk.Kind)))
	buf = append(buf, gvk.Kind...)
	buf = append(buf, 0x12)
	buf = binary.AppendUvarint(buf, uint64(size))
	buf = slices.Grow(buf, size+4)
	raw := buf[len(buf) : len(buf)+size]
	if _, err := m.MarshalToSizedBuffer(raw); err != nil {
		return nil, err
	}
	buf = buf[:len(buf)+size]
	return append(buf, 0x1a, 0, 0x22, 0), nil
}

func uvarintLen(n int) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}

// Decode fills obj from its stored form, checking that a protobuf value is
// of the expected kind.
func Decode(data []byte, obj runtime.Object, gvk schema.GroupVersionKind) error {
	m, ok := obj.(Message)
	if !ok {
		return json.Unmarshal(data, obj)
	}
	if !bytes.HasPrefix(data, protoMagic) {
		return fmt.Errorf("not a Kubernetes protobuf value (no k8s envelope)")
	}
	typeMeta, raw, err := envelope(data[len(protoMagic):])
	if err != nil {
		return err
	}
	var tm runtime.TypeMeta
	if err := tm.Unmarshal(typeMeta); err != nil {
		return err
	}
	if tm.Kind != gvk.Kind || tm.APIVersion != gvk.GroupVersion().String() {
		return fmt.Errorf("holds %s %s, want %s %s", tm.APIVersion, tm.Kind, gvk.GroupVersion().String(), gvk.Kind)
	}
	return m.Unmarshal(raw)
}

// envelope returns the type and raw fields of a runtime.Unknown without
// copying them (its generated Unmarshal copies the raw object, which the
// object's own Unmarshal then copies again).
func envelope(b []byte) (typeMeta, raw []byte, err error) {
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, nil, errBadEnvelope
		}
		b = b[n:]
		field, wire := tag>>3, tag&7
		if wire != 2 {
			return nil, nil, errBadEnvelope
		}
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, nil, errBadEnvelope
		}
		value := b[n : n+int(l)]
		b = b[n+int(l):]
		switch field {
		case 1:
			typeMeta = value
		case 2:
			raw = value
		}
	}
	return typeMeta, raw, nil
}

var errBadEnvelope = errors.New("damaged Kubernetes protobuf envelope")

// Field returns the bytes of a nested length-delimited field of a stored
// protobuf object without decoding it: path lists field numbers from the
// object's top level down (an Event's involvedObject.name is 2, 3). ok is
// false when the value is not protobuf or a field is missing.
func Field(data []byte, path ...int) (value []byte, ok bool) {
	if !bytes.HasPrefix(data, protoMagic) {
		return nil, false
	}
	_, b, err := envelope(data[len(protoMagic):])
	if err != nil {
		return nil, false
	}
	for _, want := range path {
		if b, ok = field(b, want); !ok {
			return nil, false
		}
	}
	return b, true
}

// field finds the last occurrence of a length-delimited field in a message,
// skipping the others.
func field(b []byte, want int) (value []byte, ok bool) {
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, false
		}
		b = b[n:]
		num, wire := int(tag>>3), tag&7
		switch wire {
		case 0:
			if _, n = binary.Uvarint(b); n <= 0 {
				return nil, false
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return nil, false
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return nil, false
			}
			b = b[4:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return nil, false
			}
			if num == want {
				value, ok = b[n:n+int(l)], true
			}
			b = b[n+int(l):]
		default:
			return nil, false
		}
	}
	return value, ok
}
