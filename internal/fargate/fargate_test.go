package fargate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"prod*", "prod", true},
		{"prod*", "prod-metrics", true},
		{"prod*", "dev-prod", false},
		{"*dev", "team-dev", true},
		{"value?", "valuea", true},
		{"value?", "value", false},
		{"value?", "value-a", false},
		{"frontend*?", "frontend", false},
		{"frontend*?", "frontend1", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"*", "", true},
		{"checkout", "checkout", true},
		{"checkout", "checkouts", false},
		{"a.b", "axb", false}, // no regex meaning
	}
	for _, tt := range tests {
		if got := Glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func profile(name string, selectors ...cluster.FargateSelector) *cluster.FargateProfile {
	p := &cluster.FargateProfile{Selectors: selectors}
	p.Name = name
	return p
}

func TestChoose(t *testing.T) {
	profiles := []*cluster.FargateProfile{
		profile("prod-workload", cluster.FargateSelector{Namespace: "prod*"}),
		profile("beta-workload", cluster.FargateSelector{Namespace: "prod-*", Labels: map[string]string{"tier": "beta?"}}),
		profile("checkout-profile", cluster.FargateSelector{Namespace: "checkout", Labels: map[string]string{"fargate": "yes"}}),
	}
	tests := []struct {
		name, namespace string
		labels          map[string]string
		want            string
	}{
		{"first by name among matches", "prod-metrics", map[string]string{"tier": "beta1"}, "beta-workload"},
		{"label pattern needs one more character", "prod-metrics", map[string]string{"tier": "beta"}, "prod-workload"},
		{"all selector labels required", "checkout", map[string]string{"app": "checkout"}, ""},
		{"labels match", "checkout", map[string]string{"fargate": "yes", "app": "x"}, "checkout-profile"},
		{"requested profile", "prod-a", map[string]string{LabelProfile: "prod-workload", "tier": "beta1"}, "prod-workload"},
		{"requested profile must match", "prod", map[string]string{LabelProfile: "beta-workload"}, ""},
		{"requested profile unknown", "prod", map[string]string{LabelProfile: "nope"}, ""},
		{"no namespace match", "dev", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if p := Choose(profiles, tt.namespace, tt.labels); p != nil {
				got = p.Name
			}
			if got != tt.want {
				t.Errorf("Choose = %q, want %q", got, tt.want)
			}
		})
	}
}

// The examples of docs/fargate.md#sizing.
func TestSizeFor(t *testing.T) {
	tests := []struct {
		cpu, mem string
		want     string
		ok       bool
	}{
		{"0", "0", "0.25vCPU 0.5GB", true},
		{"1", "2.5G", "1vCPU 3GB", true},
		{"1", "8Gi", "2vCPU 9GB", true},
		{"500m", "500Mi", "0.5vCPU 1GB", true},
		{"250m", "3Gi", "0.5vCPU 4GB", true},
		{"250m", "512Mi", "0.25vCPU 1GB", true},
		{"250m", "256Mi", "0.25vCPU 0.5GB", true},
		{"5", "10Gi", "8vCPU 16GB", true},
		{"8", "57Gi", "8vCPU 60GB", true},
		{"8", "60Gi", "16vCPU 64GB", true},
		{"16", "119Gi", "16vCPU 120GB", true},
		{"16", "120Gi", "", false},
		{"17", "1Gi", "", false},
	}
	for _, tt := range tests {
		cpu, mem := resource.MustParse(tt.cpu), resource.MustParse(tt.mem)
		z, ok := SizeFor(cpu.MilliValue(), mem.Value())
		if ok != tt.ok || (ok && z.String() != tt.want) {
			t.Errorf("SizeFor(%s, %s) = %q, %v; want %q, %v", tt.cpu, tt.mem, z, ok, tt.want, tt.ok)
		}
		if ok {
			if back, ok := ParseSize(z.String()); !ok || back != z {
				t.Errorf("ParseSize(%q) = %v, %v", z, back, ok)
			}
		}
	}
}

// Init containers count by their maximum, app containers by their sum.
func TestPodRequests(t *testing.T) {
	req := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "i1", Resources: req("2", "1Gi")}, {Name: "i2", Resources: req("500m", "3Gi")}},
		Containers:     []corev1.Container{{Name: "a", Resources: req("500m", "1Gi")}, {Name: "b", Resources: req("500m", "1Gi")}},
	}}
	cpu, mem := PodRequests(pod)
	if cpu != 2000 || mem != 3<<30 {
		t.Fatalf("PodRequests = %d, %d; want 2000, %d", cpu, mem, 3<<30)
	}
}

func TestHourlyPrice(t *testing.T) {
	tests := []struct {
		region, size, want string
		ok                 bool
	}{
		{"us-east-1", "0.25vCPU 0.5GB", "0.0123425", true},
		{"us-west-2", "0.25vCPU 1GB", "0.014565", true},
		{"us-west-2", "2vCPU 9GB", "0.120965", true},
		{"eu-west-1", "1vCPU 2GB", "0.05434", true},
		{"ap-south-2", "1vCPU 2GB", "", false},
	}
	for _, tt := range tests {
		z, _ := ParseSize(tt.size)
		got, _, ok := HourlyPrice(tt.region, z)
		if got != tt.want || ok != tt.ok {
			t.Errorf("HourlyPrice(%s, %s) = %q, %v; want %q, %v", tt.region, tt.size, got, ok, tt.want, tt.ok)
		}
	}
}

func TestUnsupported(t *testing.T) {
	yes := true
	base := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	}
	s := cluster.New("", 1)
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   string
	}{
		{"plain", func(*corev1.Pod) {}, ""},
		{"privileged init container", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i", SecurityContext: &corev1.SecurityContext{Privileged: &yes}}}
		}, "Pod not supported on Fargate: invalid SecurityContext fields: Privileged"},
		{"host network and port", func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		}, "Pod not supported on Fargate: fields not supported: HostNetwork, port contains HostIP or HostPort"},
		{"host ip", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostIP: "10.0.0.1"}}
		}, "Pod not supported on Fargate: port contains HostIP or HostPort"},
		{"emptyDir and configMap are fine", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}}
		}, ""},
		{"missing claim", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "test-pvc"}}}}
		}, `Pod not supported on Fargate: volumes not supported: persistence not supported because: persistentvolumeclaim "test-pvc" not found`},
		{"gpu limit", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		}, "Pod not supported on Fargate: resources not supported: nvidia.com/gpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base()
			tt.mutate(p)
			if got := Unsupported(s, p); got != tt.want {
				t.Errorf("Unsupported = %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestMutate(t *testing.T) {
	s := cluster.New("", 1)
	s.FargateProfiles = map[string]*cluster.FargateProfile{"fp": profile("fp", cluster.FargateSelector{Namespace: "default"})}
	isController := true
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   string
	}{
		{"taken", func(*corev1.Pod) {}, SchedulerName},
		{"opted out", func(p *corev1.Pod) { p.Annotations = map[string]string{LabelComputeType: ComputeTypeEC2} }, corev1.DefaultSchedulerName},
		{"daemonset pod", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "ds", Controller: &isController}}
		}, corev1.DefaultSchedulerName},
		{"other scheduler", func(p *corev1.Pod) { p.Spec.SchedulerName = "my-scheduler" }, "my-scheduler"},
		{"other namespace", func(p *corev1.Pod) { p.Namespace = "kube-system" }, corev1.DefaultSchedulerName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
				Spec: corev1.PodSpec{SchedulerName: corev1.DefaultSchedulerName}}
			tt.mutate(p)
			if err := Mutate(s, p); err != nil {
				t.Fatal(err)
			}
			if p.Spec.SchedulerName != tt.want {
				t.Errorf("schedulerName = %q, want %q", p.Spec.SchedulerName, tt.want)
			}
			if (tt.want == SchedulerName) != (p.Labels[LabelProfile] == "fp") {
				t.Errorf("profile label = %q", p.Labels[LabelProfile])
			}
		})
	}
}
