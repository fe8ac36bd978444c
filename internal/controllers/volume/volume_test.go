package volume

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/sim"
)

func newCluster(t *testing.T, driverImage string, zones ...string) *cluster.State {
	t.Helper()
	s := cluster.New("1.34", 7)
	if err := admission.Bootstrap(s); err != nil {
		t.Fatal(err)
	}
	for i, z := range zones {
		name := "ip-10-0-" + string(rune('1'+i)) + "-1.eu-west-1.compute.internal"
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelTopologyZone: z, corev1.LabelTopologyRegion: "eu-west-1", corev1.LabelInstanceTypeStable: "m5.large"}}}
		must(t, admission.Create(s, n))
	}
	if driverImage != "" {
		ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: nodeDaemonSet, Namespace: driverNamespace},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "ebs-plugin", Image: driverImage}}}}}}
		s.DaemonSets[cluster.Key(ds.Namespace, ds.Name)] = ds
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func class(name, provisioner string, mode storagev1.VolumeBindingMode, params map[string]string, allowed ...string) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, Parameters: params, VolumeBindingMode: &mode}
	if len(allowed) > 0 {
		sc.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: aws.EBSZoneTopologyKey, Values: allowed}}}}
	}
	return sc
}

func claim(name, className, size string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: modes, StorageClassName: &className,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
}

func settle(t *testing.T, s *cluster.State) {
	t.Helper()
	must(t, sim.Settle(s, []sim.Controller{New()}, time.Hour))
}

func reasons(s *cluster.State, name string) []string {
	var out []string
	for _, e := range s.EventsFor("PersistentVolumeClaim", "default", name) {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}

func TestWaitForFirstConsumerFlow(t *testing.T) {
	s := newCluster(t, "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.41.0", "eu-west-1a", "eu-west-1b")
	must(t, admission.Create(s, class("gp3", aws.EBSCSIDriver, storagev1.VolumeBindingWaitForFirstConsumer, map[string]string{"type": "gp3"})))
	must(t, admission.Create(s, claim("data-web-0", "gp3", "1500Mi")))
	settle(t, s)
	pvc := s.PersistentVolumeClaims["default/data-web-0"]
	if pvc.Status.Phase != corev1.ClaimPending || len(s.PersistentVolumes) != 0 {
		t.Fatalf("claim must wait for its consumer, got %s with %d volumes", pvc.Status.Phase, len(s.PersistentVolumes))
	}
	want := []string{"WaitForFirstConsumer: waiting for first consumer to be created before binding"}
	if got := reasons(s, "data-web-0"); len(got) != 1 || got[0] != want[0] {
		t.Fatalf("events %q, want %q", got, want)
	}
	// The scheduler's VolumeBinding PreBind picks the second node.
	node := "ip-10-0-2-1.eu-west-1.compute.internal"
	pvc.Annotations = map[string]string{"volume.kubernetes.io/selected-node": node}
	start := s.Now
	settle(t, s)
	if pvc.Status.Phase != corev1.ClaimBound {
		t.Fatalf("claim not bound after provisioning: %s %v", pvc.Status.Phase, reasons(s, "data-web-0"))
	}
	pv := s.PersistentVolumes[pvc.Spec.VolumeName]
	if pv == nil || pv.Name != "pvc-"+string(pvc.UID) {
		t.Fatalf("volume name %q, want pvc-<uid>", pvc.Spec.VolumeName)
	}
	if got := pv.CreationTimestamp.Sub(start); got != ProvisioningDelay {
		t.Errorf("provisioned after %v, want %v", got, ProvisioningDelay)
	}
	expr := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions
	if len(expr) != 1 || expr[0].Key != aws.WellKnownZoneTopologyKey || expr[0].Values[0] != "eu-west-1b" {
		t.Errorf("node affinity %+v, want %s In [eu-west-1b]", expr, aws.WellKnownZoneTopologyKey)
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.String() != "2Gi" {
		t.Errorf("capacity %s, want 2Gi (rounded up to GiB)", q.String())
	}
	if pvc.Status.Capacity.Storage().String() != "2Gi" {
		t.Errorf("claim capacity %s", pvc.Status.Capacity.Storage().String())
	}
	for k, v := range map[string]string{"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
		"volume.kubernetes.io/storage-provisioner": aws.EBSCSIDriver, "volume.beta.kubernetes.io/storage-provisioner": aws.EBSCSIDriver} {
		if pvc.Annotations[k] != v {
			t.Errorf("claim annotation %s=%q, want %q", k, pvc.Annotations[k], v)
		}
	}
	if pv.Annotations["pv.kubernetes.io/provisioned-by"] != aws.EBSCSIDriver || pv.Spec.CSI == nil || pv.Status.Phase != corev1.VolumeBound {
		t.Errorf("volume %+v", pv)
	}
	got := reasons(s, "data-web-0")
	wantAll := []string{
		"WaitForFirstConsumer: waiting for first consumer to be created before binding",
		"ExternalProvisioning: Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
		`Provisioning: External provisioner is provisioning volume for claim "default/data-web-0"`,
		"ProvisioningSucceeded: Successfully provisioned volume " + pv.Name,
	}
	if len(got) != len(wantAll) {
		t.Fatalf("events %q", got)
	}
	for i := range got {
		if got[i] != wantAll[i] {
			t.Errorf("event %d: %q, want %q", i, got[i], wantAll[i])
		}
	}
}

func TestImmediateProvisioning(t *testing.T) {
	cases := []struct {
		name, driver, claimName string
		allowed                 []string
		provisioner             string
		wantZone, wantKey       string
	}{
		// The claim name hash picks among the zones of registered nodes.
		{"old driver key", "aws-ebs-csi-driver:v1.32.0", "data-db-0", nil, aws.EBSCSIDriver, "", aws.EBSZoneTopologyKey},
		{"allowedTopologies", "aws-ebs-csi-driver:v1.40.0", "data-db-0", []string{"eu-west-1c"}, aws.EBSCSIDriver, "eu-west-1c", aws.WellKnownZoneTopologyKey},
		{"in-tree gp2 migrated", "aws-ebs-csi-driver:v1.40.0", "logs", []string{"eu-west-1b"}, aws.InTreeEBSProvisioner, "eu-west-1b", corev1.LabelTopologyZone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newCluster(t, c.driver, "eu-west-1a", "eu-west-1b")
			must(t, admission.Create(s, class("sc", c.provisioner, storagev1.VolumeBindingImmediate, map[string]string{"type": "gp2"}, c.allowed...)))
			must(t, admission.Create(s, claim(c.claimName, "sc", "10Gi")))
			settle(t, s)
			pvc := s.PersistentVolumeClaims["default/"+c.claimName]
			pv := s.PersistentVolumes[pvc.Spec.VolumeName]
			if pv == nil {
				t.Fatalf("not provisioned: %v", reasons(s, c.claimName))
			}
			want := c.wantZone
			if want == "" {
				h, i := claimNameHashAndIndex(c.claimName)
				want = []string{"eu-west-1a", "eu-west-1b"}[(h+i)%2]
			}
			expr := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions
			if expr[0].Key != c.wantKey || expr[0].Values[0] != want {
				t.Errorf("affinity %+v, want %s In [%s]", expr, c.wantKey, want)
			}
			if c.provisioner == aws.InTreeEBSProvisioner {
				if pv.Spec.AWSElasticBlockStore == nil || pv.Spec.AWSElasticBlockStore.VolumeID[:len("aws://eu-west-1b/vol-")] != "aws://eu-west-1b/vol-" ||
					len(expr) != 2 || expr[1].Key != corev1.LabelTopologyRegion || pv.Labels[corev1.LabelTopologyRegion] != "eu-west-1" ||
					pv.Annotations["pv.kubernetes.io/migrated-to"] != aws.EBSCSIDriver || pv.Annotations["pv.kubernetes.io/provisioned-by"] != aws.InTreeEBSProvisioner {
					t.Errorf("in-tree volume %+v", pv)
				}
			}
		})
	}
}

func TestClaimNameHashAndIndex(t *testing.T) {
	// Claims of one StatefulSet hash the same base and differ by ordinal.
	h0, i0 := claimNameHashAndIndex("data-web-0")
	h1, i1 := claimNameHashAndIndex("www-web-1")
	if h0 != h1 || i0 != 0 || i1 != 1 {
		t.Errorf("got (%d,%d) (%d,%d)", h0, i0, h1, i1)
	}
	if _, i := claimNameHashAndIndex("logs"); i != 0 {
		t.Errorf("plain name index %d", i)
	}
}

func TestStaticBinding(t *testing.T) {
	pv := func(name, size, className string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}, AccessModes: modes, StorageClassName: className,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: aws.EBSCSIDriver, VolumeHandle: name}}}}
	}
	rwo, rwx := corev1.ReadWriteOnce, corev1.ReadWriteMany
	cases := []struct {
		name  string
		pvs   []*corev1.PersistentVolume
		claim *corev1.PersistentVolumeClaim
		want  string
	}{
		{"smallest that fits", []*corev1.PersistentVolume{pv("big", "100Gi", "manual", rwo), pv("small", "5Gi", "manual", rwo), pv("fit", "20Gi", "manual", rwo)},
			claim("c", "manual", "10Gi"), "fit"},
		{"access modes must be a superset", []*corev1.PersistentVolume{pv("rwo", "20Gi", "manual", rwo), pv("rwx", "50Gi", "manual", rwo, rwx)},
			claim("c", "manual", "10Gi", rwx), "rwx"},
		{"class must match", []*corev1.PersistentVolume{pv("other", "20Gi", "fast", rwo)}, claim("c", "manual", "10Gi"), ""},
		{"too small", []*corev1.PersistentVolume{pv("tiny", "1Gi", "manual", rwo)}, claim("c", "manual", "10Gi"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newCluster(t, "", "eu-west-1a")
			for _, v := range c.pvs {
				must(t, admission.Create(s, v))
			}
			must(t, admission.Create(s, c.claim))
			settle(t, s)
			pvc := s.PersistentVolumeClaims["default/c"]
			if pvc.Spec.VolumeName != c.want {
				t.Fatalf("bound to %q, want %q", pvc.Spec.VolumeName, c.want)
			}
			if c.want == "" {
				// No class object named "manual": the claim stays Pending, as upstream.
				if pvc.Status.Phase != corev1.ClaimPending {
					t.Errorf("phase %s", pvc.Status.Phase)
				}
				return
			}
			v := s.PersistentVolumes[c.want]
			if v.Status.Phase != corev1.VolumeBound || v.Spec.ClaimRef.UID != pvc.UID || v.Annotations["pv.kubernetes.io/bound-by-controller"] != "yes" {
				t.Errorf("volume %+v", v)
			}
			for _, other := range c.pvs {
				if other.Name != c.want && s.PersistentVolumes[other.Name].Status.Phase != corev1.VolumeAvailable {
					t.Errorf("%s: phase %s, want Available", other.Name, s.PersistentVolumes[other.Name].Status.Phase)
				}
			}
		})
	}
}

func TestCSINodeRegistration(t *testing.T) {
	s := newCluster(t, "", "eu-west-1a")
	settle(t, s)
	if len(s.CSINodes) != 0 {
		t.Fatal("no driver installed, yet nodes registered it")
	}
	s = newCluster(t, "aws-ebs-csi-driver:v1.41.0", "eu-west-1a")
	settle(t, s)
	name := "ip-10-0-1-1.eu-west-1.compute.internal"
	if n, ok := AttachLimit(s, name); !ok || n != 25 {
		t.Errorf("attach limit %d %v, want 25 (m5.large: the driver's 27 less the root volume and the warm ENI)", n, ok)
	}
	if s.Nodes[name].Labels[aws.EBSZoneTopologyKey] != "eu-west-1a" {
		t.Errorf("node labels %v", s.Nodes[name].Labels)
	}
}

func TestUnknownClassStaysPending(t *testing.T) {
	s := newCluster(t, "aws-ebs-csi-driver:v1.41.0", "eu-west-1a")
	must(t, admission.Create(s, claim("c", "nope", "1Gi")))
	settle(t, s)
	got := reasons(s, "c")
	want := `ProvisioningFailed: storageclass.storage.k8s.io "nope" not found`
	if len(got) != 1 || got[0] != want || s.PersistentVolumeClaims["default/c"].Status.Phase != corev1.ClaimPending {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestClaimSizeRejectedAtAdmission(t *testing.T) {
	s := newCluster(t, "aws-ebs-csi-driver:v1.41.0", "eu-west-1a")
	must(t, admission.Create(s, class("st1", aws.EBSCSIDriver, storagev1.VolumeBindingWaitForFirstConsumer, map[string]string{"type": "st1"})))
	must(t, admission.Create(s, class("gp2", aws.InTreeEBSProvisioner, storagev1.VolumeBindingWaitForFirstConsumer, map[string]string{"type": "gp2"})))
	cases := []struct{ className, size, want string }{
		{"gp2", "17Ti", `PersistentVolumeClaim "c" is invalid: spec.resources.requests.storage: Invalid value: "17Ti": exceeds the largest EBS gp2 volume (16Ti) that StorageClass "gp2" can provision`},
		{"st1", "100Gi", `PersistentVolumeClaim "c" is invalid: spec.resources.requests.storage: Invalid value: "100Gi": is below the smallest EBS st1 volume (125Gi) that StorageClass "st1" can provision`},
		{"gp2", "16Ti", ""},
	}
	for _, c := range cases {
		err := admission.Create(s, claim("c", c.className, c.size))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s %s: got %q, want %q", c.className, c.size, got, c.want)
		}
	}
}

func TestPreboundClaim(t *testing.T) {
	pv := func(name, size, className string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:       className,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: aws.EBSCSIDriver, VolumeHandle: name}}}}
	}
	cases := []struct {
		name      string
		volume    *corev1.PersistentVolume
		wantBound bool
		wantEvent string
	}{
		// A claim naming its volume binds at once, even in a WaitForFirstConsumer class.
		{"named volume binds", pv("pv1", "10Gi", "gp2"), true, ""},
		{"too small", pv("pv1", "5Gi", "gp2"), false, `VolumeMismatch: Cannot bind to requested volume "pv1": requested PV is too small`},
		{"other class", pv("pv1", "10Gi", "fast"), false, `VolumeMismatch: Cannot bind to requested volume "pv1": storageClassName does not match`},
		{"volume not there yet", nil, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newCluster(t, "v1.40.0", "eu-west-1a")
			must(t, admission.Create(s, class("gp2", aws.InTreeEBSProvisioner, storagev1.VolumeBindingWaitForFirstConsumer, nil)))
			if c.volume != nil {
				must(t, admission.Create(s, c.volume))
			}
			pvc := claim("c", "gp2", "10Gi")
			pvc.Spec.VolumeName = "pv1"
			must(t, admission.Create(s, pvc))
			settle(t, s)
			got := s.PersistentVolumeClaims["default/c"]
			if bound := got.Status.Phase == corev1.ClaimBound; bound != c.wantBound {
				t.Fatalf("phase %s, want bound=%v", got.Status.Phase, c.wantBound)
			}
			if c.wantBound && s.PersistentVolumes["pv1"].Spec.ClaimRef.UID != got.UID {
				t.Errorf("volume's claimRef %+v", s.PersistentVolumes["pv1"].Spec.ClaimRef)
			}
			evs := reasons(s, "c")
			if c.wantEvent != "" && (len(evs) == 0 || evs[len(evs)-1] != c.wantEvent) {
				t.Errorf("events %q, want last %q", evs, c.wantEvent)
			}
		})
	}
}
