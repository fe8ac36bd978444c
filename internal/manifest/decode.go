package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	krt "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/internal/eksctl"
	"github.com/berth-sim/berth/internal/parallel"
)

// StdinName is the file name objects read from "-" carry, as in kubectl.
const StdinName = "STDIN"

// recognizedExtensions are the files a directory contributes (kubectl's list).
var recognizedExtensions = []string{".json", ".yaml", ".yml"}

// Load reads every -f argument: a file, a directory (its .json, .yaml and .yml
// files in lexical order, not recursing, like kubectl without -R) or "-" for
// stdin. Every problem found is reported, one line each, and then no objects
// are returned: a failed load must change nothing.
func Load(paths []string, stdin io.Reader) ([]Object, error) {
	var objs []Object
	var errs []error
	add := func(file string, data []byte) {
		o, err := Decode(file, data)
		objs = append(objs, o...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range paths {
		if p == "-" {
			if stdin == nil {
				errs = append(errs, fmt.Errorf("%s: no standard input", StdinName))
				continue
			}
			data, err := io.ReadAll(stdin)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %v", StdinName, err))
				continue
			}
			add(StdinName, data)
			continue
		}
		files, err := expand(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %v", f, unwrapPathError(err)))
				continue
			}
			add(f, data)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return objs, nil
}

// expand turns a path into the files it stands for.
func expand(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("the path %q does not exist", p)
		}
		return nil, fmt.Errorf("%s: %v", p, unwrapPathError(err))
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, unwrapPathError(err))
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		ext := filepath.Ext(e.Name()) // case-sensitive, as in kubectl
		for _, r := range recognizedExtensions {
			if ext == r {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("error reading [%s]: recognized file extensions are [%s]", p, strings.Join(recognizedExtensions, " "))
	}
	return files, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Decode reads one file's content. file is used only to label sources and
// errors. It returns the objects that decoded and, joined, one *Error per
// document or List item that did not.
func Decode(file string, data []byte) ([]Object, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	results := make([]docResult, len(docs))
	// Documents are independent: decode them on all CPUs, each into its own
	// slot, and report them in file order.
	parallel.For(len(docs), parallelFrom, func(i int) {
		d := docs[i]
		src := Source{File: file, Document: i + 1, Line: d.line}
		results[i].objs, results[i].errs = decodeDocument(d, src)
	})
	n := 0
	for _, r := range results {
		n += len(r.objs)
	}
	objs := make([]Object, 0, n)
	var errs []error
	for _, r := range results {
		objs = append(objs, r.objs...)
		errs = append(errs, r.errs...)
	}
	if len(objs) == 0 {
		objs = nil
	}
	return objs, errors.Join(errs...)
}

type docResult struct {
	objs []Object
	errs []error
}

// parallelFrom is the number of documents from which decoding is spread
// over the CPUs; smaller files are not worth the goroutines. (A variable for
// the test that compares both ways.)
var parallelFrom = 64

// header is what every document must say about itself.
type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   json.RawMessage   `json:"metadata"`
	Items      []json.RawMessage `json:"items"`
}

func decodeDocument(d document, src Source) ([]Object, []error) {
	raw := d.data
	var fh fastHeader
	if !d.json {
		var fast bool
		if raw, fh, fast = fastYAMLToJSON(d.data); !fast {
			var err error
			if raw, err = yaml.YAMLToJSONStrict(d.data); err != nil {
				return nil, []error{&Error{Source: src, Err: yamlError(err, d.start)}}
			}
		}
	}
	if string(raw) == "null" {
		return nil, nil
	}
	var h header
	if fh.valid {
		// The fast converter read apiVersion and kind as plain strings; the
		// metadata is only looked at again for an error's label.
		h = header{APIVersion: fh.apiVersion, Kind: fh.kind}
	} else {
		var err error
		if h, err = readHeader(raw); err != nil {
			return nil, []error{&Error{Source: src, Err: err}}
		}
	}
	canonical := !d.json
	if h.Kind == "List" || (strings.HasSuffix(h.Kind, "List") && h.Items != nil) {
		var objs []Object
		var errs []error
		for i, item := range h.Items {
			itemSrc := src
			itemSrc.Item = i + 1
			ih, err := readHeader(item)
			if err != nil {
				errs = append(errs, &Error{Source: itemSrc, Err: err})
				continue
			}
			// Items are re-marshalled from encoding/json's decoding: canonical.
			o, err := decodeObject(item, ih, itemSrc, true)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			objs = append(objs, o)
		}
		return objs, errs
	}
	o, err := decodeObject(raw, h, src, canonical)
	if err != nil {
		return nil, []error{err}
	}
	return []Object{o}, nil
}

func readHeader(raw []byte) (header, error) {
	var h header
	var probe any
	if err := json.Unmarshal(raw, &probe); err != nil {
		return h, err
	}
	if _, ok := probe.(map[string]any); !ok {
		return h, fmt.Errorf("expected an object with apiVersion and kind, got %s", jsonType(probe))
	}
	var loose struct {
		APIVersion any             `json:"apiVersion"`
		Kind       any             `json:"kind"`
		Metadata   json.RawMessage `json:"metadata"`
		Items      any             `json:"items"`
	}
	if err := json.Unmarshal(raw, &loose); err != nil {
		return h, err
	}
	var missing []string
	av, ok := loose.APIVersion.(string)
	if !ok || av == "" {
		missing = append(missing, "apiVersion not set")
	}
	k, ok := loose.Kind.(string)
	if !ok || k == "" {
		missing = append(missing, "kind not set")
	}
	if len(missing) > 0 {
		return h, fmt.Errorf("error validating data: [%s]", strings.Join(missing, ", "))
	}
	h.APIVersion, h.Kind, h.Metadata = av, k, loose.Metadata
	if items, ok := loose.Items.([]any); ok {
		h.Items = make([]json.RawMessage, len(items))
		for i, it := range items {
			b, err := json.Marshal(it)
			if err != nil {
				return h, err
			}
			h.Items[i] = b
		}
	} else if loose.Items != nil && strings.HasSuffix(k, "List") {
		return h, fmt.Errorf("items: expected a list, got %s", jsonType(loose.Items))
	}
	return h, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	default:
		return "an object"
	}
}

// decodeObject turns one object's JSON into its typed form. canonical says
// raw is encoding/json's rendering of a decoded map (see Object.Canonical).
func decodeObject(raw []byte, h header, src Source, canonical bool) (Object, error) {
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	if err != nil {
		return Object{}, &Error{Source: src, Err: fmt.Errorf("apiVersion: %v", err)}
	}
	gvk := gv.WithKind(h.Kind)
	label := func() string {
		if h.Metadata == nil {
			h.Metadata = metadataOf(raw)
		}
		return labelFromMeta(h.Kind, h.Metadata)
	}
	k, ok := kindsByGVK[gvk]
	if !ok {
		for _, known := range kinds {
			if known.gvk.Kind == gvk.Kind && known.gvk.Group == gvk.Group {
				return Object{}, &Error{Source: src, Object: label(),
					Err: fmt.Errorf("no matches for kind %q in version %q", gvk.Kind, h.APIVersion)}
			}
		}
		if gvk.Group == "kustomize.config.k8s.io" {
			return Object{}, &Error{Source: src, Object: label(),
				Err: fmt.Errorf("kind %q (%s) is a Kustomize file: apply its directory with -k", gvk.Kind, h.APIVersion)}
		}
		return Object{}, &Error{Source: src, Object: label(),
			Err: fmt.Errorf("berth does not model kind %q (%s) yet", gvk.Kind, h.APIVersion)}
	}
	var obj krt.Object
	if k.newObject == nil {
		cfg, err := eksctl.Decode(raw)
		if err != nil {
			return Object{}, &Error{Source: src, Object: label(), Err: err}
		}
		obj = cfg
	} else {
		into := k.newObject()
		if err := decodeStrict(raw, into); err != nil {
			return Object{}, &Error{Source: src, Object: label(), Err: oneLine(err)}
		}
		obj = into
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return Object{Object: obj, GVK: gvk, Source: src, Raw: raw, Canonical: canonical}, nil
}

// decodeStrict is what the API server's strict JSON decoder does with a
// document whose kind is already known (strictJSON.Decode without its
// second pass to find apiVersion and kind, which decodeObject has):
// case-sensitive field names, integers kept, unknown and duplicate fields
// reported together as one "strict decoding error".
func decodeStrict(raw []byte, into krt.Object) error {
	strictErrs, err := sigsjson.UnmarshalStrict(raw, into)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		return krt.NewStrictDecodingError(strictErrs)
	}
	return nil
}

// metadataOf reads the metadata field leniently, as readHeader does.
func metadataOf(raw []byte) json.RawMessage {
	var loose struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &loose)
	return loose.Metadata
}

// labelFromMeta names an object for error messages before it has decoded,
// reading metadata leniently.
func labelFromMeta(kind string, metadata json.RawMessage) string {
	var m struct {
		Name      any `json:"name"`
		Namespace any `json:"namespace"`
	}
	_ = json.Unmarshal(metadata, &m)
	name, _ := m.Name.(string)
	ns, _ := m.Namespace.(string)
	return objectLabel(kind, ns, name)
}

func oneLine(err error) error {
	msg := err.Error()
	if !strings.ContainsAny(msg, "\r\n") {
		return err
	}
	return errors.New(strings.Join(strings.Fields(msg), " "))
}
