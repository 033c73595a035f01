package podvalidate

import (
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// immutableRefused is why a ConfigMap or Secret may not be immutable: a
// source's objects change when their manifest does.
const immutableRefused = "podhost takes a changed ConfigMap or Secret as it is; immutable is not enforced"

// ValidateConfigMap checks a ConfigMap a source defines as the API server
// checks one: its name, every key (of data and binaryData, none in both)
// and the total size. Errors name the key, never a value.
func ValidateConfigMap(cm *v1.ConfigMap) field.ErrorList {
	allErrs := validateObjectMeta(&cm.ObjectMeta, field.NewPath("metadata"))
	errs, size := validateData(cm.Data, field.NewPath("data"))
	allErrs = append(allErrs, errs...)
	errs, binarySize := validateData(cm.BinaryData, field.NewPath("binaryData"))
	allErrs = append(allErrs, errs...)
	for _, k := range sortedKeys(cm.BinaryData) {
		if _, dup := cm.Data[k]; dup {
			allErrs = append(allErrs, field.Invalid(field.NewPath("binaryData").Key(k), k, "duplicate of key present in data"))
		}
	}
	if size+binarySize > v1.MaxSecretSize {
		allErrs = append(allErrs, field.TooLong(field.NewPath("data"), "", v1.MaxSecretSize))
	}
	if cm.Immutable != nil && *cm.Immutable {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), immutableRefused))
	}
	return allErrs
}

// secretTypeKeys are the keys a Secret of a built-in type must have, as
// the API server requires them.
var secretTypeKeys = map[v1.SecretType][]string{
	v1.SecretTypeDockercfg:        {v1.DockerConfigKey},
	v1.SecretTypeDockerConfigJson: {v1.DockerConfigJsonKey},
	v1.SecretTypeBasicAuth:        nil,
	v1.SecretTypeSSHAuth:          {v1.SSHAuthPrivateKey},
	v1.SecretTypeTLS:              {v1.TLSCertKey, v1.TLSPrivateKeyKey},
	v1.SecretTypeBootstrapToken:   nil,
	v1.SecretTypeOpaque:           nil,
}

// ValidateSecret checks a Secret a source defines: its name, every key,
// the total size and the keys its type requires. A service-account-token
// Secret is refused: its token is the API server's to issue. Errors name
// the key, never a value.
func ValidateSecret(s *v1.Secret) field.ErrorList {
	allErrs := validateObjectMeta(&s.ObjectMeta, field.NewPath("metadata"))
	errs, size := validateData(s.Data, field.NewPath("data"))
	allErrs = append(allErrs, errs...)
	if size > v1.MaxSecretSize {
		allErrs = append(allErrs, field.TooLong(field.NewPath("data"), "", v1.MaxSecretSize))
	}
	if s.Type == v1.SecretTypeServiceAccountToken {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("type"), "a service-account token is the API server's to issue"))
	}
	for _, k := range secretTypeKeys[s.Type] {
		if _, ok := s.Data[k]; !ok {
			allErrs = append(allErrs, field.Required(field.NewPath("data").Key(k), "a Secret of type "+string(s.Type)+" has it"))
		}
	}
	if s.Type == v1.SecretTypeBasicAuth && len(s.Data[v1.BasicAuthUsernameKey]) == 0 && len(s.Data[v1.BasicAuthPasswordKey]) == 0 {
		allErrs = append(allErrs, field.Required(field.NewPath("data"), "a Secret of type "+string(s.Type)+" has a username or a password"))
	}
	if s.Immutable != nil && *s.Immutable {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), immutableRefused))
	}
	return allErrs
}

// validateData checks every key of a ConfigMap's or Secret's data with
// apimachinery's rule (a file name in a volume: letters, digits, '-',
// '_', '.'; not "." nor "..") and returns the size of the values. The
// key is the bad value; it is a name, not data.
func validateData[V ~string | ~[]byte](data map[string]V, p *field.Path) (field.ErrorList, int) {
	var allErrs field.ErrorList
	size := 0
	for _, k := range sortedKeys(data) {
		for _, msg := range validation.IsConfigMapKey(k) {
			allErrs = append(allErrs, field.Invalid(p.Key(k), k, msg))
		}
		size += len(data[k])
	}
	return allErrs, size
}

// sortedKeys orders errors found ranging over a map.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
