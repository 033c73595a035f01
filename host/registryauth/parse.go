package registryauth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Entry is the username and password a docker config gives one registry
// key.
type Entry struct {
	Username string
	Password string
}

// rawEntry is an entry as docker writes it; email is ignored.
type rawEntry struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Auth     string `json:"auth"`
}

// errAuthField is why an entry's auth field is unusable; it never quotes
// the field.
var errAuthField = errors.New(`"auth" is not base64 of username:password`)

// ParseDockerConfigJSON reads the value of a dockerconfigjson Secret's
// .dockerconfigjson key: {"auths": {KEY: ENTRY, …}}.
func ParseDockerConfigJSON(data []byte) (map[string]Entry, error) {
	var doc struct {
		Auths map[string]rawEntry `json:"auths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError(err)
	}
	return entries(doc.Auths)
}

// ParseDockercfg reads the value of a dockercfg Secret's .dockercfg key:
// {KEY: ENTRY, …}.
func ParseDockercfg(data []byte) (map[string]Entry, error) {
	var doc map[string]rawEntry
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError(err)
	}
	return entries(doc)
}

// jsonError says what is wrong with a docker config without quoting it: a
// syntax error's offset, or the field of the wrong type.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("not valid JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Errorf("a JSON %s where an object was expected", typ.Value)
		}
		return fmt.Errorf("field %q is a JSON %s, not what a docker config holds there", typ.Field, typ.Value)
	}
	return fmt.Errorf("not a docker config")
}

func entries(raw map[string]rawEntry) (map[string]Entry, error) {
	out := make(map[string]Entry, len(raw))
	for key, r := range raw {
		e := Entry{Username: r.Username, Password: r.Password}
		if r.Auth != "" {
			user, pass, err := decodeAuth(r.Auth)
			if err != nil {
				return nil, fmt.Errorf("registry %q: %w", key, err)
			}
			e = Entry{Username: user, Password: pass}
		}
		out[key] = e
	}
	return out, nil
}

// decodeAuth decodes base64(username:password), padded or not.
func decodeAuth(field string) (string, string, error) {
	enc := base64.RawStdEncoding
	if strings.HasSuffix(strings.TrimSpace(field), "=") {
		enc = base64.StdEncoding
	}
	b, err := enc.DecodeString(field)
	if err != nil {
		return "", "", errAuthField
	}
	user, pass, ok := strings.Cut(string(b), ":")
	if !ok {
		return "", "", errAuthField
	}
	return user, pass, nil
}

// secretEntries reads a pull secret: its entries, or nil when its type or
// key makes it no docker config (the kubelet passes over such a Secret).
func secretEntries(name string, s *v1.Secret) (map[string]Entry, error) {
	var key string
	var parse func([]byte) (map[string]Entry, error)
	switch s.Type {
	case v1.SecretTypeDockerConfigJson:
		key, parse = v1.DockerConfigJsonKey, ParseDockerConfigJSON
	case v1.SecretTypeDockercfg:
		key, parse = v1.DockerConfigKey, ParseDockercfg
	default:
		return nil, nil
	}
	data := s.Data[key]
	if len(data) == 0 {
		return nil, nil
	}
	e, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("image pull secret %s key %s: %w", name, key, err)
	}
	return e, nil
}
