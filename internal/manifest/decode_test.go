package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/internal/eksctl"
)

// summary renders what a test cares about for each object.
func summary(objs []Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s %s %s/%s", o.Source, o.GVK.Kind, o.Namespace(), o.Name()))
	}
	return out
}

func TestLoadFiles(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{
			name:  "multi-document YAML with empty documents and comments",
			paths: []string{"testdata/multi.yaml"},
			want: []string{
				"testdata/multi.yaml:4: document 1 Namespace /ui",
				"testdata/multi.yaml:11: document 2 ServiceAccount ui/ui",
				"testdata/multi.yaml:17: document 3 Deployment ui/ui",
			},
		},
		{
			name:  "List items are expanded",
			paths: []string{"testdata/list.yaml"},
			want: []string{
				"testdata/list.yaml:1: document 1 item 1 ConfigMap /one",
				"testdata/list.yaml:1: document 1 item 2 PriorityClass /high",
				"testdata/list.yaml:13: document 2 Node /ip-10-42-10-138.us-west-2.compute.internal",
			},
		},
		{
			name:  "JSON stream",
			paths: []string{"testdata/objects.json"},
			want: []string{
				"testdata/objects.json:1: document 1 Pod default/p1",
				"testdata/objects.json:7: document 2 Secret /s",
			},
		},
		{
			name:  "directory: recognised extensions only, lexical order, not recursive",
			paths: []string{"testdata/dir"},
			want: []string{
				"testdata/dir/a.yaml:1: document 1 Namespace /a",
				"testdata/dir/b.yml:1: document 1 Namespace /b",
			},
		},
		{
			name:  "several paths keep their order",
			paths: []string{"testdata/dir/b.yml", "testdata/cluster.yaml", "testdata/dir/a.yaml"},
			want: []string{
				"testdata/dir/b.yml:1: document 1 Namespace /b",
				"testdata/cluster.yaml:3: document 1 ClusterConfig /eks-workshop",
				"testdata/dir/a.yaml:1: document 1 Namespace /a",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Load(tt.paths, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(objs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestLoadTypedContent(t *testing.T) {
	objs, err := Load([]string{"testdata/multi.yaml", "testdata/list.yaml", "testdata/cluster.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := objs[2].Object.(*appsv1.Deployment)
	if !ok {
		t.Fatalf("object 3 is %T, want *appsv1.Deployment", objs[2].Object)
	}
	if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Resources.Requests.Memory().Cmp(resource.MustParse("1536Mi")) != 0 {
		t.Errorf("deployment fields not decoded: %+v", d.Spec)
	}
	if d.APIVersion != "apps/v1" || d.Kind != "Deployment" {
		t.Errorf("TypeMeta = %+v", d.TypeMeta)
	}
	if pc, ok := objs[4].Object.(*schedulingv1.PriorityClass); !ok || pc.Value != 1000 {
		t.Errorf("object 5 = %#v, want PriorityClass with value 1000", objs[4].Object)
	}
	n, ok := objs[5].Object.(*corev1.Node)
	if !ok || len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Effect != corev1.TaintEffectNoExecute {
		t.Errorf("object 6 = %#v, want Node with a NoExecute taint", objs[5].Object)
	}
	cfg, ok := objs[6].Object.(*eksctl.ClusterConfig)
	if !ok || len(cfg.ManagedNodeGroups) != 2 {
		t.Fatalf("object 7 = %#v, want ClusterConfig with two managed groups", objs[6].Object)
	}
	if err := ValidateAll(objs); err != nil {
		t.Errorf("valid testdata does not validate: %v", err)
	}
}

func TestLoadStdin(t *testing.T) {
	in := strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: from-stdin\n")
	objs, err := Load([]string{"-"}, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"STDIN:1: document 1 Namespace /from-stdin"}
	if got := summary(objs); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestLoadKustomize(t *testing.T) {
	tests := []struct {
		dir              string
		wantNodeSelector map[string]string
		wantTolerations  []corev1.Toleration
	}{
		{dir: "testdata/kustomize/base"},
		{dir: "testdata/kustomize/nodeselector", wantNodeSelector: map[string]string{"kubernetes.io/arch": "arm64"}},
		{
			dir:              "testdata/kustomize/toleration",
			wantNodeSelector: map[string]string{"kubernetes.io/arch": "arm64"},
			wantTolerations:  []corev1.Toleration{{Key: "frontend", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			objs, err := LoadKustomize(tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			// Legacy ordering puts the Namespace first although the base lists it last.
			want := []string{
				tt.dir + ":1: document 1 Namespace /ui",
				tt.dir + ":6: document 2 Deployment ui/ui",
			}
			if got := summary(objs); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			spec := objs[1].Object.(*appsv1.Deployment).Spec.Template.Spec
			if !reflect.DeepEqual(spec.NodeSelector, tt.wantNodeSelector) {
				t.Errorf("nodeSelector = %v, want %v", spec.NodeSelector, tt.wantNodeSelector)
			}
			if !reflect.DeepEqual(spec.Tolerations, tt.wantTolerations) {
				t.Errorf("tolerations = %v, want %v", spec.Tolerations, tt.wantTolerations)
			}
			if err := ValidateAll(objs); err != nil {
				t.Errorf("validate: %v", err)
			}
		})
	}
}

func TestLoadKustomizeError(t *testing.T) {
	_, err := LoadKustomize("testdata/dir")
	if err == nil || !strings.HasPrefix(err.Error(), "testdata/dir: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want one line naming the directory", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "unmodelled kind",
			in:   "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web, namespace: shop}\n",
			want: `f.yaml:1: document 1 (Ingress shop/web): berth does not model kind "Ingress" (networking.k8s.io/v1) yet`,
		},
		{
			name: "modelled kind in an unknown version",
			in:   "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: web}\n",
			want: `f.yaml:1: document 1 (Deployment web): no matches for kind "Deployment" in version "apps/v1beta1"`,
		},
		{
			name: "kustomization given to -f",
			in:   "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
			want: `f.yaml:1: document 1 (Kustomization): kind "Kustomization" (kustomize.config.k8s.io/v1beta1) is a Kustomize file: apply its directory with -k`,
		},
		{
			name: "unknown fields are rejected",
			in:   "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  colour: red\n  containers: [{name: c, image: x, bogus: 1}]\n",
			want: `f.yaml:1: document 1 (Pod p): strict decoding error: unknown field "spec.colour", unknown field "spec.containers[0].bogus"`,
		},
		{
			name: "bad quantity",
			in:   "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: lots}}}]\n",
			want: `f.yaml:1: document 1 (Pod p): quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
		},
		{
			name: "wrong type",
			in:   "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: three}\n",
			want: `f.yaml:1: document 1 (Deployment d): json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`,
		},
		{
			name: "YAML syntax error reports the file line",
			in:   "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n# second\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n   bad: indent\n",
			want: `f.yaml:6: document 2: yaml: line 10: mapping values are not allowed in this context`,
		},
		{
			name: "duplicate key",
			in:   "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  name: b\n",
			want: `f.yaml:1: document 1: yaml: unmarshal errors: line 5: key "name" already set in map`,
		},
		{
			name: "missing kind and apiVersion",
			in:   "metadata: {name: a}\n",
			want: `f.yaml:1: document 1: error validating data: [apiVersion not set, kind not set]`,
		},
		{
			name: "not an object",
			in:   "- a\n- b\n",
			want: `f.yaml:1: document 1: expected an object with apiVersion and kind, got a list`,
		},
		{
			name: "bad separator",
			in:   "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---oops\n",
			want: `f.yaml: line 4: invalid Yaml document separator: oops`,
		},
		{
			name: "bad List item, good one kept out",
			in:   "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: ok}}\n- {apiVersion: v1, metadata: {name: x}}\n",
			want: `f.yaml:1: document 1 item 2: error validating data: [kind not set]`,
		},
		{
			name: "several problems, one line each",
			in:   "apiVersion: v1\nkind: Foo\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Bar\nmetadata: {name: b}\n",
			want: "f.yaml:1: document 1 (Foo a): berth does not model kind \"Foo\" (v1) yet\n" +
				"f.yaml:5: document 2 (Bar b): berth does not model kind \"Bar\" (v1) yet",
		},
		{
			name: "invalid JSON reports its line",
			in:   "{\"apiVersion\": \"v1\",\n \"kind\": \"Namespace\",\n \"metadata\": {\"name\": \"a\"},,\n}\n",
			want: `f.yaml: line 3: invalid JSON: invalid character ',' looking for beginning of object key string`,
		},
		{
			name: "ClusterConfig taints of the wrong shape",
			in:   "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: r}\nnodeGroups: [{name: a, taints: 3}]\n",
			want: `f.yaml:1: document 1 (ClusterConfig c): error unmarshaling JSON: while decoding JSON: taints must be a {string: string} or a [{key, value, effect}]: json: cannot unmarshal number into Go value of type []eksctl.Taint`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("f.yaml", []byte(tt.in))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n  %s\nwant\n  %s", err, tt.want)
			}
		})
	}
}

func TestLoadPathErrors(t *testing.T) {
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "README.md"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		paths []string
		want  string
	}{
		{[]string{"testdata/missing.yaml"}, `the path "testdata/missing.yaml" does not exist`},
		{[]string{empty}, fmt.Sprintf("error reading [%s]: recognized file extensions are [.json .yaml .yml]", empty)},
		{[]string{"-"}, "STDIN: no standard input"},
	}
	for _, tt := range tests {
		objs, err := Load(tt.paths, nil)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Load(%v) error = %v, want %q", tt.paths, err, tt.want)
		}
		if objs != nil {
			t.Errorf("Load(%v) returned objects despite an error", tt.paths)
		}
	}
}

func TestLoadPartialFailureReturnsNothing(t *testing.T) {
	in := strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Widget\nmetadata: {name: w}\n")
	objs, err := Load([]string{"testdata/dir/a.yaml", "-"}, in)
	if err == nil || objs != nil {
		t.Fatalf("objs=%v err=%v: a failed load must return no objects", objs, err)
	}
	if want := `STDIN:5: document 2 (Widget w): berth does not model kind "Widget" (v1) yet`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestSupportedKinds(t *testing.T) {
	var got []string
	for _, gvk := range SupportedKinds() {
		got = append(got, gvk.GroupVersion().String()+" "+gvk.Kind)
	}
	want := []string{
		"v1 ConfigMap", "v1 Namespace", "v1 Node", "v1 PersistentVolume", "v1 PersistentVolumeClaim", "v1 Pod", "v1 Secret", "v1 Service", "v1 ServiceAccount",
		"apps/v1 DaemonSet", "apps/v1 Deployment", "apps/v1 ReplicaSet", "apps/v1 StatefulSet",
		"batch/v1 Job",
		"eksctl.io/v1alpha5 ClusterConfig",
		"karpenter.k8s.aws/v1 EC2NodeClass", "karpenter.k8s.aws/v1alpha1 AWSNodeTemplate",
		"karpenter.sh/v1 NodePool", "karpenter.sh/v1alpha5 Provisioner",
		"policy/v1 PodDisruptionBudget",
		"scheduling.k8s.io/v1 PriorityClass",
		"storage.k8s.io/v1 CSINode", "storage.k8s.io/v1 StorageClass",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SupportedKinds = %v, want %v", got, want)
	}
}
