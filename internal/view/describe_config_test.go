package view

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// describeConfigState holds one object of each kind the describers in
// describe_config.go print, plus an event on the config map.
func describeConfigState() *cluster.State {
	s := cluster.New("1.34", 1)
	s.Now = cluster.Epoch.Add(10 * time.Minute)
	created := at(s, 10*time.Minute)
	never := corev1.PreemptNever

	s.ServiceAccounts["ui/ui"] = &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui", UID: "uid-sa-ui", CreationTimestamp: created,
			Labels:      map[string]string{"app.kubernetes.io/name": "ui"},
			Annotations: map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/ui"}},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}, {Name: "ecr"}},
	}
	s.ServiceAccounts["ui/default"] = &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ui", UID: "uid-sa-default", CreationTimestamp: created},
	}
	s.ConfigMaps["ui/ui"] = &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui", UID: "uid-cm-ui", CreationTimestamp: created},
		Data: map[string]string{
			"RETAIL_UI_ENDPOINTS_CATALOG": "http://catalog:80",
			"application.yaml":            "server:\n  port: 8080\n",
		},
		BinaryData: map[string][]byte{"logo.png": make([]byte, 1234)},
	}
	s.ConfigMaps["ui/empty"] = &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: "ui", UID: "uid-cm-empty", CreationTimestamp: created},
	}
	s.Events = append(s.Events, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "ui.cm", Namespace: "ui"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "ui", Name: "ui", UID: "uid-cm-ui"},
		Type:           corev1.EventTypeWarning, Reason: "Stale", Message: "config is stale",
		Source:        corev1.EventSource{Component: "checker"},
		LastTimestamp: at(s, 2*time.Minute), FirstTimestamp: at(s, 2*time.Minute), Count: 1,
	})
	s.Secrets["ui/db"] = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ui", UID: "uid-secret-db", CreationTimestamp: created,
			Labels: map[string]string{"app": "db"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"username": []byte("admin"), "password": []byte("0123456789abcdef")},
	}
	s.Secrets["ui/ui-token"] = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ui-token", Namespace: "ui", UID: "uid-secret-token", CreationTimestamp: created,
			Annotations: map[string]string{"kubernetes.io/service-account.name": "ui"}},
		Type: corev1.SecretTypeServiceAccountToken,
		Data: map[string][]byte{"ca.crt": make([]byte, 1107), "namespace": []byte("ui"), "token": []byte("eyJhbGciOi.x.y")},
	}
	s.PriorityClasses["batch-low"] = &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "batch-low", UID: "uid-pc", CreationTimestamp: created,
			Labels:      map[string]string{"tier": "batch"},
			Annotations: map[string]string{"owner": "data", "team": "etl"}},
		Value: 1000, PreemptionPolicy: &never, Description: "Batch work that never preempts.",
	}
	count := int32(25)
	s.CSINodes["ip-10-0-1-10.ec2.internal"] = &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-1-10.ec2.internal", UID: "uid-csinode", CreationTimestamp: created,
			Annotations: map[string]string{"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{
			Name: "ebs.csi.aws.com", NodeID: "i-0123456789abcdef0",
			TopologyKeys: []string{"kubernetes.io/os", "topology.ebs.csi.aws.com/zone"},
			Allocatable:  &storagev1.VolumeNodeResources{Count: &count},
		}}},
	}
	s.CSINodes["bare"] = &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: "bare", UID: "uid-bare", CreationTimestamp: created},
		Spec:       storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{}},
	}
	return s
}

func TestDescribeConfigKinds(t *testing.T) {
	tests := []struct {
		name, kind, namespace, object string
		want                          string
	}{
		{
			name: "service account with pull secrets", kind: "serviceaccount", namespace: "ui", object: "ui",
			want: "Name:                ui\n" +
				"Namespace:           ui\n" +
				"Labels:              app.kubernetes.io/name=ui\n" +
				"Annotations:         eks.amazonaws.com/role-arn: arn:aws:iam::111122223333:role/ui\n" +
				"Image pull secrets:  regcred\n" +
				"                     ecr\n" +
				"Events:              <none>\n",
		},
		{
			name: "bare service account", kind: "sa", namespace: "ui", object: "default",
			want: "Name:                default\n" +
				"Namespace:           ui\n" +
				"Labels:              <none>\n" +
				"Annotations:         <none>\n" +
				"Image pull secrets:  <none>\n" +
				"Events:              <none>\n",
		},
		{
			name: "config map with data, binary data and an event", kind: "configmap", namespace: "ui", object: "ui",
			want: "Name:         ui\n" +
				"Namespace:    ui\n" +
				"Labels:       <none>\n" +
				"Annotations:  <none>\n" +
				"\n" +
				"Data\n" +
				"====\n" +
				"RETAIL_UI_ENDPOINTS_CATALOG:\n" +
				"----\n" +
				"http://catalog:80\n" +
				"\n" +
				"application.yaml:\n" +
				"----\n" +
				"server:\n" +
				"  port: 8080\n" +
				"\n" +
				"\n" +
				"\n" +
				"BinaryData\n" +
				"====\n" +
				"logo.png: 1234 bytes\n" +
				"\n" +
				"Events:\n" +
				"  Type     Reason  Age   From     Message\n" +
				"  ----     ------  ----  ----     -------\n" +
				"  Warning  Stale   2m    checker  config is stale\n",
		},
		{
			name: "empty config map", kind: "cm", namespace: "ui", object: "empty",
			want: "Name:         empty\n" +
				"Namespace:    ui\n" +
				"Labels:       <none>\n" +
				"Annotations:  <none>\n" +
				"\n" +
				"Data\n" +
				"====\n" +
				"\n" +
				"BinaryData\n" +
				"====\n" +
				"\n" +
				"Events:  <none>\n",
		},
		{
			name: "opaque secret shows sizes, keys sorted", kind: "secret", namespace: "ui", object: "db",
			want: "Name:         db\n" +
				"Namespace:    ui\n" +
				"Labels:       app=db\n" +
				"Annotations:  <none>\n" +
				"\n" +
				"Type:  Opaque\n" +
				"\n" +
				"Data\n" +
				"====\n" +
				"password:  16 bytes\n" +
				"username:  5 bytes\n",
		},
		{
			name: "service account token secret shows the token", kind: "secrets", namespace: "ui", object: "ui-token",
			want: "Name:         ui-token\n" +
				"Namespace:    ui\n" +
				"Labels:       <none>\n" +
				"Annotations:  kubernetes.io/service-account.name: ui\n" +
				"\n" +
				"Type:  kubernetes.io/service-account-token\n" +
				"\n" +
				"Data\n" +
				"====\n" +
				"ca.crt:     1107 bytes\n" +
				"namespace:  2 bytes\n" +
				"token:      eyJhbGciOi.x.y\n",
		},
		{
			name: "priority class prints annotations inline and no labels", kind: "pc", object: "batch-low",
			want: "Name:              batch-low\n" +
				"Value:             1000\n" +
				"GlobalDefault:     false\n" +
				"PreemptionPolicy:  Never\n" +
				"Description:       Batch work that never preempts.\n" +
				"Annotations:       owner=data,team=etl\n" +
				"Events:            <none>\n",
		},
		{
			name: "CSI node with the EBS driver", kind: "csinode", object: "ip-10-0-1-10.ec2.internal",
			want: "Name:               ip-10-0-1-10.ec2.internal\n" +
				"Labels:             <none>\n" +
				"Annotations:        storage.alpha.kubernetes.io/migrated-plugins: kubernetes.io/aws-ebs\n" +
				"CreationTimestamp:  " + cluster.Epoch.Format(time.RFC1123Z) + "\n" +
				"Spec:\n" +
				"  Drivers:\n" +
				"    ebs.csi.aws.com:\n" +
				"      Node ID:  i-0123456789abcdef0\n" +
				"      Allocatables:\n" +
				"        Count:        25\n" +
				"      Topology Keys:  [kubernetes.io/os topology.ebs.csi.aws.com/zone]\n" +
				"Events:               <none>\n",
		},
		{
			name: "CSI node without drivers", kind: "csinodes", object: "bare",
			want: "Name:               bare\n" +
				"Labels:             <none>\n" +
				"Annotations:        <none>\n" +
				"CreationTimestamp:  " + cluster.Epoch.Format(time.RFC1123Z) + "\n" +
				"Spec:\n" +
				"Events:  <none>\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Describe(&out, describeConfigState(), tt.kind, tt.namespace, []string{tt.object}, ""); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", out.String(), tt.want)
			}
		})
	}
}
