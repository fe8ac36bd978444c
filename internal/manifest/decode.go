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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/internal/eksctl"
)

// StdinName is the file name objects read from "-" carry, as in kubectl.
const StdinName = "STDIN"

// recognizedExtensions are the files a directory contributes (kubectl's list).
var recognizedExtensions = []string{".json", ".yaml", ".yml"}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, schedulingv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// strictJSON decodes with the API server's strict checks: unknown and
// duplicate fields are errors ("strict decoding error: unknown field ...").
var strictJSON = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
	kjson.SerializerOptions{Strict: true})

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
	var objs []Object
	var errs []error
	for i, d := range docs {
		src := Source{File: file, Document: i + 1, Line: d.line}
		o, e := decodeDocument(d, src)
		objs = append(objs, o...)
		errs = append(errs, e...)
	}
	return objs, errors.Join(errs...)
}

// header is what every document must say about itself.
type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   json.RawMessage   `json:"metadata"`
	Items      []json.RawMessage `json:"items"`
}

func decodeDocument(d document, src Source) ([]Object, []error) {
	raw := d.data
	if !d.json {
		var err error
		if raw, err = yaml.YAMLToJSONStrict(d.data); err != nil {
			return nil, []error{&Error{Source: src, Err: yamlError(err, d.start)}}
		}
	}
	if string(raw) == "null" {
		return nil, nil
	}
	h, err := readHeader(raw)
	if err != nil {
		return nil, []error{&Error{Source: src, Err: err}}
	}
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
			o, err := decodeObject(item, ih, itemSrc)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			objs = append(objs, o)
		}
		return objs, errs
	}
	o, err := decodeObject(raw, h, src)
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

// decodeObject turns one object's JSON into its typed form.
func decodeObject(raw []byte, h header, src Source) (Object, error) {
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	if err != nil {
		return Object{}, &Error{Source: src, Err: fmt.Errorf("apiVersion: %v", err)}
	}
	gvk := gv.WithKind(h.Kind)
	label := labelFromMeta(h.Kind, h.Metadata)
	k, ok := kindsByGVK[gvk]
	if !ok {
		for _, known := range kinds {
			if known.gvk.Kind == gvk.Kind && known.gvk.Group == gvk.Group {
				return Object{}, &Error{Source: src, Object: label,
					Err: fmt.Errorf("no matches for kind %q in version %q", gvk.Kind, h.APIVersion)}
			}
		}
		if gvk.Group == "kustomize.config.k8s.io" {
			return Object{}, &Error{Source: src, Object: label,
				Err: fmt.Errorf("kind %q (%s) is a Kustomize file: apply its directory with -k", gvk.Kind, h.APIVersion)}
		}
		return Object{}, &Error{Source: src, Object: label,
			Err: fmt.Errorf("berth does not model kind %q (%s) yet", gvk.Kind, h.APIVersion)}
	}
	var obj runtime.Object
	if k.newObject == nil {
		cfg, err := eksctl.Decode(raw)
		if err != nil {
			return Object{}, &Error{Source: src, Object: label, Err: err}
		}
		obj = cfg
	} else {
		into := k.newObject()
		got, _, err := strictJSON.Decode(raw, &gvk, into)
		if err != nil {
			return Object{}, &Error{Source: src, Object: label, Err: oneLine(err)}
		}
		obj = got
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return Object{Object: obj, GVK: gvk, Source: src, Raw: raw}, nil
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
