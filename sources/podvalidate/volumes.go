package podvalidate

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateVolumes checks the pod's volumes and returns the names declared,
// for the volumeMount checks.
func validateVolumes(volumes []v1.Volume, path *field.Path, apiVolumes bool) (sets.Set[string], field.ErrorList) {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i := range volumes {
		vol := &volumes[i]
		vp := path.Index(i)
		allErrs = append(allErrs, dnsName(vol.Name, vp.Child("name"), validation.IsDNS1123Label)...)
		if vol.Name != "" {
			if names.Has(vol.Name) {
				allErrs = append(allErrs, field.Duplicate(vp.Child("name"), vol.Name))
			}
			names.Insert(vol.Name)
		}
		allErrs = append(allErrs, validateVolumeSource(&vol.VolumeSource, vp, apiVolumes)...)
	}
	return names, allErrs
}

// noAPIServer is why a pod that does not come from the API server may not
// have projected sources whose files podhost reads from one.
const noAPIServer = "only downwardAPI, configMap and secret sources in a pod that is not the API server's (its configMaps and secrets are the sources'; tokens and the rest need the API server)"

// validateVolumeSource requires exactly one source, and one podhost serves
// (projected sources other than downwardAPI, configMap and secret only
// with apiVolumes).
func validateVolumeSource(src *v1.VolumeSource, path *field.Path, apiVolumes bool) field.ErrorList {
	var allErrs field.ErrorList
	set := setSources(src)
	switch {
	case len(set) == 0:
		return field.ErrorList{field.Required(path, "must specify a volume source")}
	case len(set) > 1:
		return field.ErrorList{field.Forbidden(path.Child(set[1]), "may not specify more than 1 volume source")}
	}
	switch {
	case src.EmptyDir != nil:
		if l := src.EmptyDir.SizeLimit; l != nil && l.Sign() < 0 {
			allErrs = append(allErrs, field.Invalid(path.Child("emptyDir", "sizeLimit"), l.String(), "must be greater than or equal to 0"))
		}
	case src.HostPath != nil:
		if src.HostPath.Path == "" {
			allErrs = append(allErrs, field.Required(path.Child("hostPath", "path"), ""))
		}
	case src.PersistentVolumeClaim != nil:
		if src.PersistentVolumeClaim.ClaimName == "" {
			allErrs = append(allErrs, field.Required(path.Child("persistentVolumeClaim", "claimName"), ""))
		}
	case src.CSI != nil:
		if src.CSI.Driver == "" {
			allErrs = append(allErrs, field.Required(path.Child("csi", "driver"), ""))
		}
		if ref := src.CSI.NodePublishSecretRef; ref != nil && ref.Name == "" {
			allErrs = append(allErrs, field.Required(path.Child("csi", "nodePublishSecretRef", "name"), ""))
		}
	case src.Projected != nil:
		for i, s := range src.Projected.Sources {
			if !apiVolumes && s.DownwardAPI == nil && s.ConfigMap == nil && s.Secret == nil {
				allErrs = append(allErrs, field.Forbidden(path.Child("projected", "sources").Index(i), noAPIServer))
			}
		}
	}
	// Every other source is refused by Rules.
	return allErrs
}

// setSources lists the JSON names of the sources set, in declaration order.
func setSources(src *v1.VolumeSource) []string {
	all := []struct {
		name string
		set  bool
	}{
		{"hostPath", src.HostPath != nil},
		{"emptyDir", src.EmptyDir != nil},
		{"gcePersistentDisk", src.GCEPersistentDisk != nil},
		{"awsElasticBlockStore", src.AWSElasticBlockStore != nil},
		{"gitRepo", src.GitRepo != nil},
		{"secret", src.Secret != nil},
		{"nfs", src.NFS != nil},
		{"iscsi", src.ISCSI != nil},
		{"glusterfs", src.Glusterfs != nil},
		{"persistentVolumeClaim", src.PersistentVolumeClaim != nil},
		{"rbd", src.RBD != nil},
		{"flexVolume", src.FlexVolume != nil},
		{"cinder", src.Cinder != nil},
		{"cephfs", src.CephFS != nil},
		{"flocker", src.Flocker != nil},
		{"downwardAPI", src.DownwardAPI != nil},
		{"fc", src.FC != nil},
		{"azureFile", src.AzureFile != nil},
		{"configMap", src.ConfigMap != nil},
		{"vsphereVolume", src.VsphereVolume != nil},
		{"quobyte", src.Quobyte != nil},
		{"azureDisk", src.AzureDisk != nil},
		{"photonPersistentDisk", src.PhotonPersistentDisk != nil},
		{"projected", src.Projected != nil},
		{"portworxVolume", src.PortworxVolume != nil},
		{"scaleIO", src.ScaleIO != nil},
		{"storageos", src.StorageOS != nil},
		{"csi", src.CSI != nil},
		{"ephemeral", src.Ephemeral != nil},
		{"image", src.Image != nil},
	}
	var names []string
	for _, s := range all {
		if s.set {
			names = append(names, s.name)
		}
	}
	return names
}

// sortErrors orders errors by field path, so that errors found while ranging
// over a map come out the same every time.
func sortErrors(errs field.ErrorList) field.ErrorList {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}
