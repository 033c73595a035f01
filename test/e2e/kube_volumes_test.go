package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// kubeCSIHost is a Kubernetes-mode host whose volume-csi plugin serves
// the loop driver d, declared in the cluster by a CSIDriver object with
// attachRequired as given: false as a node-only driver is deployed, true
// for a driver whose volumes the attach/detach controller attaches
// (ControllerPublishVolume).
func kubeCSIHost(t *testing.T, d *loopDriverProc, attachRequired bool) *kubeHost {
	t.Helper()
	k := startKubeHostWith(t, fmt.Sprintf(`  - name: csi
    kind: volume
    path: volume-csi
    config: {drivers: [{name: %s, endpoint: "unix://%s"}], stateDir: "%s"}
`, loopDriver, d.endpoint, filepath.Join(t.TempDir(), "volume-csi")))
	t.Cleanup(func() { unmountBelow(t, k.root) })
	drv := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: loopDriver}, Spec: storagev1.CSIDriverSpec{AttachRequired: &attachRequired}}
	if _, err := k.cluster.Client.StorageV1().CSIDrivers().Create(t.Context(), drv, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CSIDriver: %v", err)
	}
	return k
}

// createVolumeAndClaim creates, through the admin client, a
// PersistentVolume <claim>-pv of the loop driver's volume handle and the
// claim <claim>; bound says whether the claim is bound to it (volumeName
// and phase Bound, as the binder would leave it). edit changes the
// PersistentVolume before it is created (its source is immutable).
func (k *kubeHost) createVolumeAndClaim(claim, handle string, bound bool, edit ...func(*v1.PersistentVolume)) {
	k.t.Helper()
	ctx := k.t.Context()
	size := resource.MustParse("64Mi")
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: claim + "-pv"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: size},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
				Driver: loopDriver, VolumeHandle: handle, FSType: "ext4"}},
			ClaimRef: &v1.ObjectReference{Namespace: "default", Name: claim},
		},
	}
	for _, e := range edit {
		e(pv)
	}
	if _, err := k.cluster.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		k.t.Fatalf("create pv: %v", err)
	}
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: "default"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: size}},
		},
	}
	if _, err := k.cluster.Client.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		k.t.Fatalf("create pvc: %v", err)
	}
	if bound {
		k.bindClaim(claim)
	}
}

// bindClaim binds the claim to <claim>-pv as the PV controller would:
// spec.volumeName, then status.phase Bound.
func (k *kubeHost) bindClaim(claim string) {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(k.t.Context(), 10*time.Second)
	defer cancel()
	claims := k.cluster.Client.CoreV1().PersistentVolumeClaims("default")
	pvc, err := claims.Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	pvc.Spec.VolumeName = claim + "-pv"
	if pvc, err = claims.Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		k.t.Fatalf("bind claim %s: %v", claim, err)
	}
	pvc.Status.Phase = v1.ClaimBound
	if _, err := claims.UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		k.t.Fatalf("claim %s status: %v", claim, err)
	}
}

// kubeClaimPod is a pod of the API server bound to the node, running
// script with the claim mounted at /data.
func kubeClaimPod(name, claim, script string) *v1.Pod {
	p := claimsPod(name, script)
	p.Spec.NodeName = kubeNode
	no := false
	p.Spec.AutomountServiceAccountToken = &no
	p.Spec.Volumes = []v1.Volume{volume("data", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}})}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
	return p
}

// TestKubeVolumesClaims: in Kubernetes mode the claims of API-server pods
// come from the API server.
func TestKubeVolumesClaims(t *testing.T) {
	d := startLoopDriver(t)
	k := kubeCSIHost(t, d, false)
	k.waitNodeReady(60 * time.Second)
	zero := int64(0)

	t.Run("a file written through a claim of the API server outlives its pod", func(t *testing.T) {
		k.createVolumeAndClaim("data", d.createVolume(t, "kube-data"), true)
		k.create(kubeClaimPod("kwriter", "data", `echo written-through-the-api > /data/file && sync && echo done; exec sleep 3600`))
		k.waitAPIRunning("kwriter", 90*time.Second)
		k.waitLog("kwriter", "main", "done")
		k.deleteAPIPod("kwriter", &zero)
		k.waitAPIGone("kwriter", 60*time.Second)

		k.create(kubeClaimPod("kreader", "data", `cat /data/file; exec sleep 3600`))
		k.waitAPIRunning("kreader", 90*time.Second)
		k.waitLog("kreader", "main", "written-through-the-api")
		k.deleteAPIPod("kreader", &zero)
		k.waitAPIGone("kreader", 60*time.Second)
	})

	t.Run("a pod whose claim is not bound waits for it", func(t *testing.T) {
		k.createVolumeAndClaim("later", d.createVolume(t, "kube-later"), false)
		k.create(kubeClaimPod("kwaiter", "later", `echo mounted; exec sleep 3600`))
		want := "claim default/later"
		poll(t, 60*time.Second, func() bool { return hasEvent(k.events("kwaiter"), "FailedMount", want) },
			func() string {
				return fmt.Sprintf("events of kwaiter:\n%s\nwant FailedMount naming %q", eventsString(k.events("kwaiter")), want)
			})
		p, _ := k.apiPod("kwaiter")
		if p == nil || p.Status.Phase != v1.PodPending {
			t.Fatalf("kwaiter: %s; want Pending while its claim is not bound", podStatusString(p))
		}
		if got := k.criContainers(string(p.UID)); len(got) != 0 {
			t.Errorf("kwaiter has containers before its claim is bound: %v", got)
		}
		for _, e := range k.events("kwaiter") {
			if e.Reason == "FailedMount" && !strings.Contains(e.Message, "is not bound") {
				t.Errorf("FailedMount %q; want it to say the claim is not bound", e.Message)
			}
		}
		k.bindClaim("later")
		k.waitAPIRunning("kwaiter", 90*time.Second)
		k.waitLog("kwaiter", "main", "mounted")
		k.deleteAPIPod("kwaiter", &zero)
		k.waitAPIGone("kwaiter", 60*time.Second)
	})
}

// TestKubeVolumesCSISecrets: a PersistentVolume's nodeStageSecretRef and
// nodePublishSecretRef name Secrets the node reads from the API server
// with its own credentials (the Node authorizer allows exactly these),
// and the driver gets their keys in NodeStageVolume and
// NodePublishVolume, as from the kubelet.
func TestKubeVolumesCSISecrets(t *testing.T) {
	d := startLoopDriver(t)
	k := kubeCSIHost(t, d, false)
	k.waitNodeReady(60 * time.Second)
	ctx := t.Context()
	for name, key := range map[string]string{"stage-creds": "stage-key", "publish-creds": "publish-key"} {
		sec := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, StringData: map[string]string{key: "kube-secret-value"}}
		if _, err := k.cluster.Client.CoreV1().Secrets("default").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create secret: %v", err)
		}
	}
	k.createVolumeAndClaim("sec", d.createVolume(t, "kube-sec"), true, func(pv *v1.PersistentVolume) {
		pv.Spec.CSI.NodeStageSecretRef = &v1.SecretReference{Namespace: "default", Name: "stage-creds"}
		pv.Spec.CSI.NodePublishSecretRef = &v1.SecretReference{Namespace: "default", Name: "publish-creds"}
	})
	k.create(kubeClaimPod("ksecrets", "sec", `echo mounted; exec sleep 3600`))
	k.waitAPIRunning("ksecrets", 90*time.Second)
	k.waitLog("ksecrets", "main", "mounted")
	got := map[string]string{}
	for _, c := range d.records(t) {
		if (c.RPC == "NodeStageVolume" || c.RPC == "NodePublishVolume") && c.Code == "OK" {
			got[c.RPC] = strings.Join(c.SecretKeys, ",")
		}
	}
	if got["NodeStageVolume"] != "stage-key" || got["NodePublishVolume"] != "publish-key" {
		t.Errorf("secret keys the driver got %v; want stage-key in the stage and publish-key in the publish", got)
	}
	zero := int64(0)
	k.deleteAPIPod("ksecrets", &zero)
	k.waitAPIGone("ksecrets", 60*time.Second)
}

// TestKubeVolumesProjected: a pod created without
// automountServiceAccountToken: false gets the kube-api-access volume of
// the ServiceAccount admission plugin, and runs with it: a token the API
// server accepts for the pod's service account, the cluster's CA and the
// namespace.
func TestKubeVolumesProjected(t *testing.T) {
	k := startKubeHost(t)
	k.waitNodeReady(60 * time.Second)
	zero := int64(0)
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount"
	pod := kubePod("tokened", v1.RestartPolicyAlways, sh("app", "cat "+sa+"/namespace; echo; echo read-"+"$(wc -c < "+sa+"/token); exec sleep 3600"))
	pod.Spec.AutomountServiceAccountToken = nil
	pod.Spec.TerminationGracePeriodSeconds = &zero
	created := k.create(pod)
	var name string
	for _, v := range created.Spec.Volumes {
		if v.Projected != nil {
			name = v.Name
		}
	}
	if name == "" {
		t.Fatalf("the API server gave pod tokened no projected volume: %+v", created.Spec.Volumes)
	}
	p := k.waitAPIRunning("tokened", 90*time.Second)
	k.waitLog("tokened", "app", "default\nread-")

	dir := filepath.Join(k.root, "pods", string(p.UID), "volumes", "kubernetes.io~projected", name)
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("volume file %s: %v", f, err)
		}
		return string(b)
	}
	review, err := k.cluster.Client.AuthenticationV1().TokenReviews().Create(t.Context(),
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: read("token")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token review: %v", err)
	}
	if want := "system:serviceaccount:default:default"; !review.Status.Authenticated || review.Status.User.Username != want {
		t.Errorf("token review: authenticated %v as %q (%s); want %s", review.Status.Authenticated, review.Status.User.Username, review.Status.Error, want)
	}
	if got := review.Status.User.Extra["authentication.kubernetes.io/pod-uid"]; len(got) != 1 || got[0] != string(p.UID) {
		t.Errorf("token bound to pod uid %v; want %s", got, p.UID)
	}
	ca, err := os.ReadFile(k.cluster.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := read("ca.crt"); got != string(ca) {
		t.Errorf("ca.crt %q; want the cluster's CA", got)
	}
	if got := read("namespace"); got != "default" {
		t.Errorf("namespace %q; want default", got)
	}
	k.deleteAPIPod("tokened", &zero)
	k.waitAPIGone("tokened", 60*time.Second)
	// The volume goes with the pod's cleanup, which may follow its removal
	// from the API.
	poll(t, 30*time.Second, func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) },
		func() string { return "the volume directory " + dir + " after the pod is gone" })
}

// volumesInUse is the node's status.volumesInUse as the API server has it.
func (k *kubeHost) volumesInUse() []string {
	k.t.Helper()
	n, err := k.cluster.Client.CoreV1().Nodes().Get(k.t.Context(), kubeNode, metav1.GetOptions{})
	if err != nil {
		k.t.Fatalf("read node: %v", err)
	}
	out := make([]string, len(n.Status.VolumesInUse))
	for i, v := range n.Status.VolumesInUse {
		out[i] = string(v)
	}
	return out
}

// TestKubeVolumesInUse: node.status.volumesInUse names a claim's CSI
// volume in the kubelet's form while its device is staged, and keeps it
// while the unstage fails after the pod is gone: the Node the host posts
// for a second volume still lists the first. Once the unstage succeeds
// the name goes, and never before the staging mount is gone (each read
// of the Node without it is followed by a look at the mount table).
func TestKubeVolumesInUse(t *testing.T) {
	d := startLoopDriverWith(t, "faults:\n- {rpc: NodeUnstageVolume, action: fail, code: Internal}\n")
	k := kubeCSIHost(t, d, false)
	k.waitNodeReady(60 * time.Second)
	zero := int64(0)
	handle := d.createVolume(t, "kube-inuse")
	name := "kubernetes.io/csi/" + loopDriver + "^" + handle
	staging := k.stagingPath(loopDriver, handle)
	k.createVolumeAndClaim("inuse", handle, true)

	k.create(kubeClaimPod("kinuse", "inuse", `echo mounted; exec sleep 3600`))
	k.waitAPIRunning("kinuse", 90*time.Second)
	poll(t, 60*time.Second, func() bool { return slices.Contains(k.volumesInUse(), name) },
		func() string {
			return fmt.Sprintf("volumesInUse %v; want %s while pod kinuse runs", k.volumesInUse(), name)
		})
	if n := mountCount(t, staging); n != 1 {
		t.Errorf("%d staging mounts of the volume in use; want 1", n)
	}

	// stagedWhileNotInUse reads the Node, then the mount table: a Node
	// without the volume while its device is still staged breaks the rule.
	stagedWhileNotInUse := func() bool {
		inUse := k.volumesInUse()
		if slices.Contains(inUse, name) {
			return false
		}
		if n := mountCount(t, staging); n != 0 {
			t.Fatalf("volumesInUse %v without %s while its device is staged (%d staging mounts)", inUse, name, n)
		}
		return true
	}
	k.deleteAPIPod("kinuse", &zero)
	k.waitAPIGone("kinuse", 60*time.Second)
	poll(t, 60*time.Second, func() bool {
		stagedWhileNotInUse()
		return strings.Contains(strings.Join(d.calls(t), ","), "NodeUnstageVolume Internal")
	}, func() string { return fmt.Sprintf("driver calls %q; want a failed unstage", d.calls(t)) })

	// A second volume comes into use: the Node posted for it still lists
	// the first, whose unstage keeps failing.
	other := d.createVolume(t, "kube-inuse-other")
	otherName := "kubernetes.io/csi/" + loopDriver + "^" + other
	k.createVolumeAndClaim("other", other, true)
	k.create(kubeClaimPod("kother", "other", `echo mounted; exec sleep 3600`))
	poll(t, 90*time.Second, func() bool { return slices.Contains(k.volumesInUse(), otherName) },
		func() string { return fmt.Sprintf("volumesInUse %v; want %s", k.volumesInUse(), otherName) })
	if inUse := k.volumesInUse(); !slices.Contains(inUse, name) {
		t.Errorf("volumesInUse %v after a failed unstage of %s; want it kept (%d staging mounts)", inUse, name, mountCount(t, staging))
	}
	k.waitAPIRunning("kother", 90*time.Second)
	k.deleteAPIPod("kother", &zero)
	k.waitAPIGone("kother", 60*time.Second)

	d.setFaults(t, "")
	poll(t, 3*time.Minute, func() bool {
		return stagedWhileNotInUse() && !slices.Contains(k.volumesInUse(), otherName)
	}, func() string {
		return fmt.Sprintf("volumesInUse %v; want neither volume once both are unstaged (driver calls %q)", k.volumesInUse(), d.calls(t))
	})
	if n := mountsBelow(t, k.root); n != 0 {
		t.Errorf("%d mounts below the root after both volumes left use", n)
	}
}

// publishContexts are the publish contexts of the driver's NodeStage and
// NodePublish calls, as "RPC map[...]" in the order of the calls.
func (d *loopDriverProc) publishContexts(t *testing.T) []string {
	t.Helper()
	b, _ := os.ReadFile(d.callLog)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		var c struct {
			RPC            string
			PublishContext map[string]string `json:"publish_context"`
		}
		if json.Unmarshal([]byte(line), &c) == nil && (c.RPC == "NodeStageVolume" || c.RPC == "NodePublishVolume") {
			out = append(out, fmt.Sprintf("%s %v", c.RPC, c.PublishContext))
		}
	}
	return out
}

// TestKubeVolumesAttach: a volume of a driver whose CSIDriver says
// attachRequired (ControllerPublishVolume through the attach/detach
// controller) is reported in use, then waits, unstaged, with FailedMount
// events saying it is not attached, until the test attaches it as the
// controller would: a VolumeAttachment named for the volume handle, the
// driver and the node, marked attached with attachmentMetadata, and the
// volume in the Node's status.volumesAttached; then it is staged and
// published with that publish context.
func TestKubeVolumesAttach(t *testing.T) {
	d := startLoopDriver(t)
	k := kubeCSIHost(t, d, true)
	k.waitNodeReady(60 * time.Second)
	zero := int64(0)
	handle := d.createVolume(t, "kube-attach")
	name := "kubernetes.io/csi/" + loopDriver + "^" + handle
	k.createVolumeAndClaim("attached", handle, true)
	k.create(kubeClaimPod("kattach", "attached", `echo mounted; exec sleep 3600`))

	poll(t, 90*time.Second, func() bool { return hasEvent(k.events("kattach"), "FailedMount", "not attached") },
		func() string {
			return fmt.Sprintf("events of kattach:\n%s\nwant FailedMount saying the volume is not attached", eventsString(k.events("kattach")))
		})
	if inUse := k.volumesInUse(); !slices.Contains(inUse, name) {
		t.Errorf("volumesInUse %v while the node waits for the attachment; want %s", inUse, name)
	}
	if got := d.publishContexts(t); len(got) != 0 {
		t.Fatalf("driver calls %v before the volume is attached; want none", got)
	}
	if p, _ := k.apiPod("kattach"); p == nil || p.Status.Phase != v1.PodPending {
		t.Fatalf("kattach: %s; want Pending until its volume is attached", podStatusString(p))
	}

	sum := sha256.Sum256([]byte(handle + loopDriver + kubeNode))
	pvName := "attached-pv"
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-" + hex.EncodeToString(sum[:])},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: loopDriver, NodeName: kubeNode,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName}},
	}
	vas := k.cluster.Client.StorageV1().VolumeAttachments()
	va, err := vas.Create(t.Context(), va, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VolumeAttachment: %v", err)
	}
	va.Status = storagev1.VolumeAttachmentStatus{Attached: true, AttachmentMetadata: map[string]string{"lun": "7"}}
	if _, err := vas.UpdateStatus(t.Context(), va, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("mark VolumeAttachment attached: %v", err)
	}
	nodes := k.cluster.Client.CoreV1().Nodes()
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(t.Context(), kubeNode, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.VolumesAttached = append(n.Status.VolumesAttached, v1.AttachedVolume{Name: v1.UniqueVolumeName(name)})
		_, err = nodes.UpdateStatus(t.Context(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("add the volume to the node's volumesAttached: %v", err)
	}

	k.waitAPIRunning("kattach", 3*time.Minute)
	k.waitLog("kattach", "main", "mounted")
	want := "NodeStageVolume map[lun:7],NodePublishVolume map[lun:7]"
	if got := strings.Join(d.publishContexts(t), ","); got != want {
		t.Errorf("driver calls %s; want %s", got, want)
	}
	k.deleteAPIPod("kattach", &zero)
	k.waitAPIGone("kattach", 60*time.Second)
	poll(t, 60*time.Second, func() bool { return !slices.Contains(k.volumesInUse(), name) },
		func() string {
			return fmt.Sprintf("volumesInUse %v after the pod is gone; want no %s", k.volumesInUse(), name)
		})
}
