package view

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/cluster"
)

// builtin is how get, describe and rollout status print one built-in kind,
// following the API server's table printers and kubectl's describers. The
// kind's names come from cluster.Kinds; kinds without an entry here print
// generically from their PrinterColumns (generic.go).
type builtin struct {
	columns []metav1.TableColumnDefinition
	row     rowFunc
	// rows, when set, replaces row for kinds that print several rows per
	// object (Fargate profiles: one per selector, as eksctl prints them).
	rows func(s *cluster.State, obj runtime.Object) []metav1.TableRow
	// describe is nil where kubectl falls back to its generic describer.
	describe describeFunc
	// fields is the field-selector set the API server supports; nil means
	// the metadata fields only.
	fields func(obj runtime.Object) fields.Set
	// status is kubectl rollout status's viewer, nil when it has none.
	status statusViewer
}

type rowFunc func(s *cluster.State, obj runtime.Object) metav1.TableRow

type describeFunc func(s *cluster.State, obj runtime.Object) string

// rowOf and describeOf adapt a printer of one Go type.
func rowOf[T runtime.Object](f func(*cluster.State, T) metav1.TableRow) rowFunc {
	return func(s *cluster.State, obj runtime.Object) metav1.TableRow { return f(s, obj.(T)) }
}

func describeOf[T runtime.Object](f func(*cluster.State, T) string) describeFunc {
	return func(s *cluster.State, obj runtime.Object) string { return f(s, obj.(T)) }
}

var builtins = map[schema.GroupKind]builtin{
	{Kind: "Pod"}:  {columns: podColumns, row: rowOf(podRow), describe: describeOf(describePod), fields: podFields},
	{Kind: "Node"}: {columns: nodeColumns, row: rowOf(nodeRow), describe: describeOf(describeNode), fields: nodeFields},
	{Kind: "Namespace"}: {columns: namespaceColumns, row: rowOf(namespaceRow), fields: namespaceFields,
		describe: describeOf(func(_ *cluster.State, n *corev1.Namespace) string { return describeNamespace(n) })},
	// kubectl has no describer for Event: it uses the generic one.
	{Kind: "Event"}:   {columns: eventColumns, row: rowOf(eventRow), fields: eventFields},
	{Kind: "Service"}: {columns: serviceColumns, row: rowOf(serviceRow), describe: describeOf(describeService)},
	{Kind: "ServiceAccount"}: {columns: serviceAccountColumns, row: rowOf(serviceAccountRow),
		describe: describeOf(describeServiceAccount)},
	{Kind: "ConfigMap"}: {columns: configMapColumns, row: rowOf(configMapRow), describe: describeOf(describeConfigMap)},
	{Kind: "Secret"}: {columns: secretColumns, row: rowOf(secretRow), fields: secretFields,
		describe: describeOf(describeSecret)},
	{Kind: "PersistentVolume"}: {columns: persistentVolumeColumns, row: rowOf(persistentVolumeRow),
		describe: describeOf(describePersistentVolume)},
	{Kind: "PersistentVolumeClaim"}: {columns: persistentVolumeClaimColumns, row: rowOf(persistentVolumeClaimRow),
		describe: describeOf(describePersistentVolumeClaim)},
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: {columns: priorityClassColumns, row: rowOf(priorityClassRow),
		describe: describeOf(describePriorityClass)},
	{Group: "apps", Kind: "Deployment"}: {columns: deploymentColumns, row: rowOf(deploymentRow),
		describe: describeDeploymentObj, status: deploymentStatus},
	{Group: "apps", Kind: "ReplicaSet"}: {columns: replicaSetColumns, row: rowOf(replicaSetRow), describe: describeReplicaSetObj},
	{Group: "apps", Kind: "StatefulSet"}: {columns: statefulSetColumns, row: rowOf(statefulSetRow),
		describe: describeStatefulSetObj, status: statefulSetStatus},
	{Group: "apps", Kind: "DaemonSet"}: {columns: daemonSetColumns, row: rowOf(daemonSetRow),
		describe: describeDaemonSetObj, status: daemonSetStatus},
	{Group: "batch", Kind: "Job"}:                  {columns: jobColumns, row: rowOf(jobRow), describe: describeJobObj, fields: jobFields},
	{Group: "policy", Kind: "PodDisruptionBudget"}: {columns: pdbColumns, row: rowOf(pdbRow), describe: describeOf(describePDB)},
	{Group: "storage.k8s.io", Kind: "StorageClass"}: {columns: storageClassColumns, row: rowOf(storageClassRow),
		describe: describeOf(describeStorageClass)},
	{Group: "storage.k8s.io", Kind: "CSINode"}: {columns: csiNodeColumns, row: rowOf(csiNodeRow), describe: describeOf(describeCSINode)},
	cluster.FargateProfileGVK.GroupKind(): {columns: fargateProfileColumns,
		rows: func(s *cluster.State, obj runtime.Object) []metav1.TableRow {
			return fargateProfileRows(s, obj.(*cluster.FargateProfile))
		},
		describe: describeOf(describeFargateProfile)},
	controller.NodeGroupGVK.GroupKind(): {columns: nodeGroupColumns, row: rowOf(nodeGroupRow),
		describe: describeOf(describeNodeGroup)},
}

// printerFor returns the kind's built-in printer, or the generic one built
// from its PrinterColumns; describe is always set.
func printerFor(k *cluster.Kind) builtin {
	b, ok := builtins[k.GVK.GroupKind()]
	if !ok {
		b = customResourcePrinter(k)
	}
	if extra, ok := describeExtras[k.GVK.GroupKind()]; ok && b.describe == nil {
		b.describe = genericDescriberWith(k.GVK, extra)
	}
	if b.describe == nil {
		b.describe = genericDescriber(k.GVK)
	}
	return b
}
