package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeEnvFromAPIObjects: a pod of the API server gets env from a
// ConfigMap and a Secret (keys, envFrom with a prefix, an optional missing
// one) read with the node's credentials, and the service links of its
// namespace; a pod naming a missing ConfigMap
// waits with CreateContainerConfigError and the kubelet's message.
func TestKubeEnvFromAPIObjects(t *testing.T) {
	k := startKubeHost(t)
	ctx := t.Context()
	core := k.cluster.Client.CoreV1()
	if _, err := core.ConfigMaps("default").Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"},
		Data: map[string]string{"MODE": "prod", "LEVEL": "3"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Secrets("default").Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"},
		Data: map[string][]byte{"password": []byte("s3cret")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	db, err := core.Services("default").Create(ctx, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shop-db"},
		Spec: v1.ServiceSpec{Ports: []v1.ServicePort{{Name: "pg", Port: 5432}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	master, err := core.Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(name string) v1.LocalObjectReference { return v1.LocalObjectReference{Name: name} }
	yes := true
	c := sh("app", "env | sort; sleep 3600")
	c.EnvFrom = []v1.EnvFromSource{
		{Prefix: "CFG_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: ref("cfg")}},
		{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: ref("absent"), Optional: &yes}},
	}
	c.Env = []v1.EnvVar{
		{Name: "PASSWORD", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: ref("creds"), Key: "password"}}},
		{Name: "LEVEL", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: ref("cfg"), Key: "LEVEL"}}},
		{Name: "SUMMARY", Value: "$(CFG_MODE)-$(LEVEL)"},
	}
	k.create(kubePod("env", v1.RestartPolicyAlways, c))
	bad := sh("app", "sleep 3600")
	bad.Env = []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: ref("nowhere"), Key: "x"}}}}
	k.create(kubePod("env-missing", v1.RestartPolicyAlways, bad))

	k.waitAPIRunning("env", 90*time.Second)
	var out string
	poll(t, 30*time.Second, func() bool {
		out, _, _ = k.kubectl(t, "", nil, "logs", "env", "-c", "app")
		return strings.Contains(out, "SUMMARY=")
	}, func() string { return "the pod printed no env: " + out })
	wantLines(t, "env of the pod", out, "CFG_MODE=prod\n", "CFG_LEVEL=3\n", "PASSWORD=s3cret\n", "LEVEL=3\n", "SUMMARY=prod-3\n",
		// The service links of its namespace and of the master service.
		"SHOP_DB_SERVICE_HOST="+db.Spec.ClusterIP+"\n", "SHOP_DB_SERVICE_PORT_PG=5432\n",
		"SHOP_DB_PORT_5432_TCP=tcp://"+db.Spec.ClusterIP+":5432\n", "KUBERNETES_SERVICE_HOST="+master.Spec.ClusterIP+"\n")

	p := k.waitAPIPod("env-missing", 60*time.Second, "CreateContainerConfigError", func(p *v1.Pod) bool {
		st := containerStatus(p, "app")
		return st != nil && st.State.Waiting != nil && st.State.Waiting.Reason == "CreateContainerConfigError"
	})
	if msg := containerStatus(p, "app").State.Waiting.Message; !strings.Contains(msg, `configmaps "nowhere" not found`) {
		t.Errorf("waiting message %q; want the API server's not found", msg)
	}
}
