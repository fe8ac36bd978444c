package generator

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/conformance/scenario"
)

// headerPrefix opens the comment line that carries the scenario's settings,
// which have no Kubernetes object of their own.
const headerPrefix = "# berth-conformance:"

// YAML renders the scenario as one multi-document file: Namespaces,
// PriorityClasses, Nodes, Services, ReplicaSets, StatefulSets, bound Pods, then pending Pods
// in scheduling order. Read parses it back.
func YAML(sc *scenario.Scenario) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s name=%s kubernetesVersion=%s percentageOfNodesToScore=%d\n",
		headerPrefix, sc.Name, sc.KubernetesVersion, sc.PercentageOfNodesToScore)
	// Kinds in the order a cluster needs them: namespaces and classes before
	// what uses them, bound pods before pending ones.
	var objs []any
	objs = appendAll(objs, sc.Namespaces)
	objs = appendAll(objs, sc.PriorityClasses)
	objs = appendAll(objs, sc.Nodes)
	objs = appendAll(objs, sc.StorageClasses)
	objs = appendAll(objs, sc.PersistentVolumes)
	objs = appendAll(objs, sc.PersistentVolumeClaims)
	objs = appendAll(objs, sc.CSINodes)
	objs = appendAll(objs, sc.Services)
	objs = appendAll(objs, sc.ReplicaSets)
	objs = appendAll(objs, sc.StatefulSets)
	objs = appendAll(objs, sc.Existing)
	objs = appendAll(objs, sc.Pending)
	if err := AppendDocs(&b, objs); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// AppendDocs writes objs to b as YAML documents, each after a "---" line.
func AppendDocs(b *bytes.Buffer, objs []any) error {
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return nil
}

// Read parses a file written by YAML (or by hand in the same shape). Pods
// with spec.nodeName are existing, the others pending, in file order.
func Read(data []byte) (*scenario.Scenario, error) {
	sc := &scenario.Scenario{KubernetesVersion: "1.36"}
	for i, doc := range strings.Split("\n"+string(data), "\n---") {
		for _, line := range strings.Split(doc, "\n") {
			if strings.HasPrefix(line, headerPrefix) {
				if err := parseHeader(sc, strings.TrimPrefix(line, headerPrefix)); err != nil {
					return nil, err
				}
			}
		}
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, fmt.Errorf("document %d: %v", i, err)
		}
		var err error
		switch tm.Kind {
		case "Namespace":
			sc.Namespaces, err = appendDoc(sc.Namespaces, doc)
		case "Node":
			sc.Nodes, err = appendDoc(sc.Nodes, doc)
		case "Service":
			sc.Services, err = appendDoc(sc.Services, doc)
		case "ReplicaSet":
			sc.ReplicaSets, err = appendDoc(sc.ReplicaSets, doc)
		case "StatefulSet":
			sc.StatefulSets, err = appendDoc(sc.StatefulSets, doc)
		case "PriorityClass":
			sc.PriorityClasses, err = appendDoc(sc.PriorityClasses, doc)
		case "StorageClass":
			sc.StorageClasses, err = appendDoc(sc.StorageClasses, doc)
		case "PersistentVolume":
			sc.PersistentVolumes, err = appendDoc(sc.PersistentVolumes, doc)
		case "PersistentVolumeClaim":
			sc.PersistentVolumeClaims, err = appendDoc(sc.PersistentVolumeClaims, doc)
		case "CSINode":
			sc.CSINodes, err = appendDoc(sc.CSINodes, doc)
		case "Pod":
			var pod *v1.Pod
			if pod, err = decode[v1.Pod](doc); err == nil {
				if pod.Spec.NodeName != "" {
					sc.Existing = append(sc.Existing, pod)
				} else {
					sc.Pending = append(sc.Pending, pod)
				}
			}
		default:
			err = fmt.Errorf("unsupported kind %q", tm.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %v", i, err)
		}
	}
	return sc, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func parseHeader(sc *scenario.Scenario, fields string) error {
	for _, f := range strings.Fields(fields) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "name":
			sc.Name = v
		case "kubernetesVersion":
			sc.KubernetesVersion = v
		case "percentageOfNodesToScore":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("header: percentageOfNodesToScore %q: %v", v, err)
			}
			sc.PercentageOfNodesToScore = int32(n)
		}
	}
	return nil
}

type object interface {
	v1.Namespace | v1.Node | v1.Service | v1.Pod | appsv1.ReplicaSet | appsv1.StatefulSet | schedulingv1.PriorityClass |
		storagev1.StorageClass | v1.PersistentVolume | v1.PersistentVolumeClaim | storagev1.CSINode
}

func decode[T object](doc string) (*T, error) {
	out := new(T)
	if err := yaml.UnmarshalStrict([]byte(doc), out); err != nil {
		return nil, err
	}
	return out, nil
}

func appendDoc[T object](list []*T, doc string) ([]*T, error) {
	o, err := decode[T](doc)
	if err != nil {
		return list, err
	}
	return append(list, o), nil
}

func appendAll[T any](out []any, items []T) []any {
	for _, o := range items {
		out = append(out, o)
	}
	return out
}
