package manifest

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// serializerScheme and strictSerializer are the API server's strict JSON
// decoder as berth used it before decodeStrict: the reference decodeStrict
// must agree with.
var serializerScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, schedulingv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

var strictSerializer = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, serializerScheme, serializerScheme,
	kjson.SerializerOptions{Strict: true})

// TestDecodeStrictKindsMatchScheme: the serializer decodes into the given
// object only when the scheme does not know its type or knows it under the
// very kind asked for; otherwise it would have made another object. Every
// modelled kind is one of those two, so decodeStrict may decode in place.
func TestDecodeStrictKindsMatchScheme(t *testing.T) {
	for _, k := range kinds {
		if k.newObject == nil {
			continue
		}
		gvks, _, err := serializerScheme.ObjectKinds(k.newObject())
		if runtime.IsNotRegisteredError(err) {
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", k.gvk, err)
		}
		found := false
		for _, g := range gvks {
			found = found || g == k.gvk
		}
		if !found {
			t.Errorf("%v: the scheme registers its type as %v", k.gvk, gvks)
		}
	}
}

// TestDecodeStrictMatchesSerializer decodes the test manifests and some
// faulty objects both ways: same objects, same errors.
func TestDecodeStrictMatchesSerializer(t *testing.T) {
	docs := []string{
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"1"}}}]}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"bogus":1,"containers":[{"name":"c","Image":"i"}]}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","name":"q"}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":3}}`,
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"taints":"x"}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":"2"}}`,
		`{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"x"},"value":1.5}`,
		`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"x"},"spec":{"weight":"a","nope":1}}`,
		`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"x"},"spec":{"minAvailable":"50%","x":{}}}`,
	}
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := splitDocuments(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range parsed {
			if raw, _, ok := fastYAMLToJSON(d.data); ok {
				docs = append(docs, string(raw))
			}
		}
	}
	for _, doc := range docs {
		h, err := readHeader([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		gv, err := schema.ParseGroupVersion(h.APIVersion)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		gvk := gv.WithKind(h.Kind)
		k, known := kindsByGVK[gvk]
		if !known || k.newObject == nil {
			continue
		}
		got := k.newObject()
		gotErr := decodeStrict([]byte(doc), got)
		want, _, wantErr := strictSerializer.Decode([]byte(doc), &gvk, k.newObject())
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Errorf("%s:\n got error %v\nwant error %v", doc, gotErr, wantErr)
			continue
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded\n%#v\nserializer\n%#v", doc, got, want)
		}
	}
}
