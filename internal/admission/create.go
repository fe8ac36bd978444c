package admission

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/qos"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// InitialNamespaces exist from the start in every cluster.
var InitialNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// Bootstrap creates what a fresh API server and its controllers create: the
// initial namespaces with their `default` service accounts, the built-in
// priority classes and the `kubernetes` service.
func Bootstrap(s *cluster.State) error {
	for _, name := range InitialNamespaces {
		if _, ok := s.Namespaces[name]; ok {
			continue
		}
		if err := CreateNamespace(s, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return err
		}
	}
	for _, name := range []string{SystemClusterCritical, SystemNodeCritical} {
		if _, ok := s.PriorityClasses[name]; ok {
			continue
		}
		pc := builtinPriorityClass(name, builtinPriorityClasses[name])
		if err := Create(s, pc); err != nil {
			return err
		}
	}
	if _, ok := s.Services[cluster.Key(metav1.NamespaceDefault, "kubernetes")]; !ok {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault,
				Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
			Spec: corev1.ServiceSpec{
				ClusterIP: serviceCIDR(s).Addr().Next().String(),
				Ports:     []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intOrString(443)}},
			},
		}
		if err := Create(s, svc); err != nil {
			return err
		}
	}
	return nil
}

// resourceName is the plural resource (with group) used in API error messages.
func resourceName(obj runtime.Object) string {
	if k := cluster.KindOf(obj); k != nil {
		return k.GroupResource()
	}
	return fmt.Sprintf("%T", obj)
}

// typeMeta is the kind and apiVersion stored objects carry.
func typeMeta(obj runtime.Object) metav1.TypeMeta {
	if k := cluster.KindOf(obj); k != nil {
		return metav1.TypeMeta{Kind: k.GVK.Kind, APIVersion: k.GVK.GroupVersion().String()}
	}
	return metav1.TypeMeta{}
}

func namespaced(obj runtime.Object) bool {
	k := cluster.KindOf(obj)
	return k == nil || k.Namespaced
}

// NotFound is the API server's not-found message: `namespaces "x" not found`.
func NotFound(resource, name string) error { return fmt.Errorf("%s %q not found", resource, name) }

// CreatePod creates a pod as the API server does: namespace check, defaults,
// the admission plugins, then generated name, uid, resourceVersion,
// creationTimestamp and phase Pending. Creating a pod wakes the scheduler.
func CreatePod(s *cluster.State, pod *corev1.Pod) error { return Create(s, pod) }

// CreateNamespace creates a namespace and, as the service-account controller
// does, its `default` ServiceAccount.
func CreateNamespace(s *cluster.State, ns *corev1.Namespace) error { return Create(s, ns) }

// Create stores a new object of any kind the simulator keeps. The object is
// taken over by the state (callers pass a copy if they keep theirs).
func Create(s *cluster.State, obj runtime.Object) error {
	m, err := metaOf(obj)
	if err != nil {
		return err
	}
	resource := resourceName(obj)
	if namespaced(obj) {
		if m.GetNamespace() == "" {
			m.SetNamespace(metav1.NamespaceDefault)
		}
		ns, ok := s.Namespaces[m.GetNamespace()]
		if !ok {
			return NotFound("namespaces", m.GetNamespace())
		}
		if ns.Status.Phase == corev1.NamespaceTerminating {
			return forbidden(resource, m, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns.Name))
		}
	} else {
		m.SetNamespace("")
	}
	if m.GetName() == "" && m.GetGenerateName() == "" {
		return fmt.Errorf("%s %q is invalid: metadata.name: Required value: name or generateName is required", typeMeta(obj).Kind, "")
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		DefaultPod(pod)
		if err := admitPod(s, pod); err != nil {
			return err
		}
	} else {
		before := karpenterRequirements(obj)
		applyDefaults(obj)
		defer noteKarpenterDefaults(s, obj, before)
		if err := admitStorage(s, obj); err != nil {
			return err
		}
		if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
			if err := admitPriorityClass(s, pc, false); err != nil {
				return err
			}
		}
	}
	// key is the stored object's key, built once for the existence check
	// and the store.
	var key string
	if m.GetName() == "" {
		// The registry retries name generation on a collision.
		for {
			name := s.GenerateName(m.GetGenerateName())
			key = cluster.Key(m.GetNamespace(), name)
			if !exists(s, obj, key) {
				m.SetName(name)
				break
			}
		}
	} else if key = cluster.Key(m.GetNamespace(), m.GetName()); exists(s, obj, key) {
		return fmt.Errorf("%s %q already exists", resource, m.GetName())
	}
	m.SetUID(typesUID(s.NewUID()))
	m.SetCreationTimestamp(metav1.NewTime(s.Now))
	m.SetResourceVersion(s.Bump())
	s.NoteCreated(m.GetUID())
	setTypeMeta(obj)
	kind := cluster.KindOf(obj)
	if kind == nil {
		return fmt.Errorf("berth does not store objects of type %T", obj)
	}
	// Generation-tracking kinds start at generation 1.
	switch obj.(type) {
	case *corev1.Pod, *corev1.Namespace, *corev1.Node, *corev1.Service, *corev1.ServiceAccount,
		*corev1.ConfigMap, *corev1.Secret, *schedulingv1.PriorityClass:
	default:
		m.SetGeneration(1)
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		o.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qos.PodQOSClass(o)}
	case *corev1.Service:
		allocateClusterIP(s, o)
	case *batchv1.Job:
		GenerateJobSelector(o)
	}
	kind.Put(s, key, obj)
	switch o := obj.(type) {
	case *corev1.Pod:
		if o.Spec.NodeName != "" {
			s.AssignedPodAdded(o) // created bound; a pending pod is its own queue entry
		}
	case *corev1.Node:
		s.NodeAdded(o)
	case *corev1.Namespace:
		// The service-account controller gives every namespace its default account.
		return Create(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: o.Name}})
	default:
		s.ObjectAdded(obj) // storage kinds; others are no scheduling event
	}
	return nil
}

// Update replaces the stored object with obj (the full desired object, as
// after kubectl's merge). Server-owned fields — uid, creationTimestamp,
// generation, status — are kept from the stored object; a spec change bumps
// metadata.generation. It reports whether anything changed; an unchanged
// object keeps its resourceVersion.
func Update(s *cluster.State, obj runtime.Object) (bool, error) {
	m, err := metaOf(obj)
	if err != nil {
		return false, err
	}
	if namespaced(obj) && m.GetNamespace() == "" {
		m.SetNamespace(metav1.NamespaceDefault)
	}
	key := cluster.Key(m.GetNamespace(), m.GetName())
	old := lookup(s, obj, key)
	if old == nil {
		return false, NotFound(resourceName(obj), m.GetName())
	}
	om, _ := metaOf(old)
	if pod, ok := obj.(*corev1.Pod); ok {
		DefaultPod(pod)
		AddDefaultTolerations(pod)
	} else {
		applyDefaults(obj)
	}
	if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
		if err := admitPriorityClass(s, pc, true); err != nil {
			return false, err
		}
	}
	m.SetUID(om.GetUID())
	m.SetCreationTimestamp(om.GetCreationTimestamp())
	m.SetGeneration(om.GetGeneration())
	m.SetResourceVersion(om.GetResourceVersion())
	setTypeMeta(obj)
	specChanged := false
	switch o := obj.(type) {
	case *corev1.Pod:
		op := old.(*corev1.Pod)
		o.Status = op.Status
		if o.Spec.NodeName == "" {
			o.Spec.NodeName = op.Spec.NodeName
		}
	case *corev1.Namespace:
		o.Status = old.(*corev1.Namespace).Status
	case *corev1.Service:
		op := old.(*corev1.Service)
		if o.Spec.ClusterIP == "" {
			o.Spec.ClusterIP, o.Spec.ClusterIPs = op.Spec.ClusterIP, op.Spec.ClusterIPs
		}
		if o.Spec.IPFamilies == nil {
			o.Spec.IPFamilies, o.Spec.IPFamilyPolicy = op.Spec.IPFamilies, op.Spec.IPFamilyPolicy
		}
		o.Status = op.Status
	case *corev1.Node:
		o.Status = old.(*corev1.Node).Status
	case *corev1.PersistentVolumeClaim, *corev1.PersistentVolume:
		keepStorageState(o, old)
	case *appsv1.Deployment:
		od := old.(*appsv1.Deployment)
		o.Status = od.Status
		specChanged = !apiequality.Semantic.DeepEqual(o.Spec, od.Spec)
	case *appsv1.ReplicaSet:
		or := old.(*appsv1.ReplicaSet)
		o.Status = or.Status
		specChanged = !apiequality.Semantic.DeepEqual(o.Spec, or.Spec)
	case *appsv1.DaemonSet, *appsv1.StatefulSet, *batchv1.Job:
		specChanged = carryWorkloadStatus(o, old)
	case *policyv1.PodDisruptionBudget:
		op := old.(*policyv1.PodDisruptionBudget)
		o.Status = op.Status
		specChanged = !apiequality.Semantic.DeepEqual(o.Spec, op.Spec)
	default:
		specChanged, _ = carryKarpenterStatus(obj, old)
	}
	if specChanged {
		m.SetGeneration(om.GetGeneration() + 1)
	}
	if apiequality.Semantic.DeepEqual(obj, old) {
		return false, nil
	}
	m.SetResourceVersion(s.Bump())
	store(s, obj, key)
	s.NoteReplaced() // its owner references may differ (cluster.ObjectSet)
	switch o := obj.(type) {
	case *corev1.Pod:
		if op := old.(*corev1.Pod); op.Spec.NodeName != "" {
			s.AssignedPodUpdated(op, o)
		} else {
			s.NotePodSelfUpdate(op, o)
		}
	case *corev1.Node:
		s.NodeUpdated(old.(*corev1.Node), o)
	default:
		s.ObjectUpdated(old, obj) // storage kinds; others are no scheduling event
	}
	return true, nil
}

func applyDefaults(obj runtime.Object) {
	if defaultKarpenter(obj) {
		return
	}
	switch o := obj.(type) {
	case *corev1.Namespace:
		DefaultNamespace(o)
	case *corev1.Service:
		DefaultService(o)
	case *appsv1.Deployment:
		DefaultDeployment(o)
	case *appsv1.ReplicaSet:
		DefaultReplicaSet(o)
	case *appsv1.DaemonSet:
		DefaultDaemonSet(o)
	case *appsv1.StatefulSet:
		DefaultStatefulSet(o)
	case *batchv1.Job:
		DefaultJob(o)
	case *schedulingv1.PriorityClass:
		if o.PreemptionPolicy == nil {
			o.PreemptionPolicy = ptrTo(corev1.PreemptLowerPriority)
		}
	case *storagev1.StorageClass:
		DefaultStorageClass(o)
	case *corev1.PersistentVolume:
		DefaultPersistentVolume(o)
	case *corev1.PersistentVolumeClaim:
		DefaultPersistentVolumeClaim(o)
	case *corev1.Secret:
		if o.Type == "" {
			o.Type = corev1.SecretTypeOpaque
		}
		// The API server's v1 conversion merges stringData into data
		// (stringData wins) and never stores stringData.
		if len(o.StringData) > 0 && o.Data == nil {
			o.Data = make(map[string][]byte, len(o.StringData))
		}
		for k, v := range o.StringData {
			o.Data[k] = []byte(v)
		}
		o.StringData = nil
	}
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok || obj == nil {
		return nil, fmt.Errorf("berth does not store objects of type %T", obj)
	}
	return m, nil
}

func setTypeMeta(obj runtime.Object) {
	tm := typeMeta(obj)
	obj.GetObjectKind().SetGroupVersionKind(tm.GroupVersionKind())
}

func exists(s *cluster.State, obj runtime.Object, key string) bool { return lookup(s, obj, key) != nil }

// lookup returns the stored object of obj's kind under key, or nil.
func lookup(s *cluster.State, obj runtime.Object, key string) runtime.Object {
	if k := cluster.KindOf(obj); k != nil {
		if o, ok := k.Get(s, key); ok {
			return o
		}
	}
	return nil
}

func store(s *cluster.State, obj runtime.Object, key string) {
	if k := cluster.KindOf(obj); k != nil {
		k.Put(s, key, obj)
	}
}

// serviceCIDR is the cluster's service range. EKS picks 172.20.0.0/16 when
// the VPC is inside 10.0.0.0/8 and 10.100.0.0/16 otherwise.
func serviceCIDR(s *cluster.State) netip.Prefix {
	if strings.HasPrefix(s.Info.VPCCIDR, "10.") {
		return netip.MustParsePrefix("172.20.0.0/16")
	}
	return netip.MustParsePrefix("10.100.0.0/16")
}

// allocateClusterIP gives a ClusterIP service a free address drawn from the
// seeded source, as the API server's random allocator does.
func allocateClusterIP(s *cluster.State, svc *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	if svc.Spec.ClusterIP == "" {
		used := map[string]bool{}
		for _, k := range cluster.SortedKeys(s.Services) {
			used[s.Services[k].Spec.ClusterIP] = true
		}
		base := serviceCIDR(s).Addr().As4()
		for {
			n := 2 + s.Rand.Intn(65533)
			ip := netip.AddrFrom4([4]byte{base[0], base[1], byte(n >> 8), byte(n)}).String()
			if !used[ip] {
				svc.Spec.ClusterIP = ip
				break
			}
		}
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if svc.Spec.IPFamilyPolicy == nil {
		svc.Spec.IPFamilyPolicy = ptrTo(corev1.IPFamilyPolicySingleStack)
	}
}

func typesUID(s string) types.UID { return types.UID(s) }

func intOrString(port int32) intstr.IntOrString { return intstr.FromInt32(port) }
