package app

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// ProviderKeyVariables are the environment variables of the model providers
// Rootkeeper knows. They never reach a server from the app's environment: a
// server that holds the key could call the model itself, with no review and
// no cap. A server that really needs one gets it from its own env.
var ProviderKeyVariables = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}

// RootsEnvVariable is where a server in roots mode env finds its roots: a
// JSON array of absolute paths (see EncodeRootsEnv).
const RootsEnvVariable = "ROOTKEEPER_ROOTS"

// Withheld reports whether the variable name must not pass from the app's
// environment to a server: the sampling provider's key variable, the known
// provider keys, and every variable the person marked private.
func (s *State) Withheld(name string) bool {
	if s.Sampling != nil && s.Sampling.APIKeyEnv == name {
		return true
	}
	return slices.Contains(ProviderKeyVariables, name) || slices.Contains(s.PrivateEnv, name)
}

// ServerEnv is the environment a stdio server starts with, by one rule: the
// app's environment (base, in os.Environ form) minus what Withheld names,
// plus the server's own variables (extra), which win over the app's. extra is
// the person's explicit configuration for that server, so it is passed even
// when it names a withheld variable.
func ServerEnv(base []string, st *State, extra map[string]string) []string {
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if k == "" {
			continue
		}
		if _, over := extra[k]; over || st.Withheld(k) {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// EncodeRootsEnv encodes paths for RootsEnvVariable as a JSON array of
// strings. A separator-joined list would let a folder whose name holds the
// separator (a folder "x:" with subfolders: /tmp/x:/tmp/secret) reach the
// server as two folders, one of them never granted; JSON has no such
// character.
func EncodeRootsEnv(paths []string) string {
	if paths == nil {
		paths = []string{}
	}
	b, _ := json.Marshal(paths)
	return string(b)
}

// SetPrivateEnv marks (or, with private false, unmarks) the environment
// variable name as private: it no longer passes from the app's environment
// to any server.
func (s *State) SetPrivateEnv(name string, private bool) error {
	if !validEnvName(name) {
		return inputErrorf("invalid environment variable name %q", name)
	}
	i := slices.Index(s.PrivateEnv, name)
	switch {
	case private && i < 0:
		s.PrivateEnv = append(s.PrivateEnv, name)
		slices.Sort(s.PrivateEnv)
	case !private && i >= 0:
		s.PrivateEnv = slices.Delete(s.PrivateEnv, i, i+1)
	}
	return nil
}
