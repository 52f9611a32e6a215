// Package policy reads an organisation's policy for Rootkeeper: one file
// an administrator puts in the system's place (Linux
// /etc/rootkeeper/policy.json, macOS /Library/Application
// Support/Rootkeeper/policy.json, Windows the registry value
// HKLM\SOFTWARE\Policies\Rootkeeper\Policy or
// %ProgramData%\Rootkeeper\policy.json), that decides what nobody on the
// machine can allow: folders no server ever sees, servers that must run
// confined, servers allowed or denied, the network's default and the
// destinations never allowed, how long a call waits for a person, whether
// "allow once" exists, and where decisions are also logged.
//
// No environment variable or flag can point elsewhere: a person must not
// be able to step around their organisation's policy by starting
// Rootkeeper differently. A file a person other than an administrator
// could have written is refused (Load says so, and doctor shows it). A
// file that cannot be read as a policy (unknown keys included) is not
// ignored: Policy.Broken says why, and Rootkeeper then refuses every
// grant rather than run without the policy.
//
// The package reads and matches; package app applies what it says.
package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tailscale/hujson"
)

// A Policy is what an organisation decided for Rootkeeper on this machine.
// The zero Policy decides nothing.
type Policy struct {
	// Source is where it was read from (a file, a registry value), ""
	// when there is none.
	Source string `json:"-"`
	// Broken says why the policy could not be read (then nothing may be
	// granted); "" when it was read (or there is none).
	Broken string `json:"-"`

	// NeverGrant are folders no decision, slot or reach answer can give
	// any server: paths or globs (filepath.Match, one segment a *), "~" the
	// person's home folder. A path inside one is never granted.
	NeverGrant []string `json:"neverGrant,omitempty"`
	// RequireConfinement: every stdio server runs confined; none is run
	// unconfined, and where Landlock is missing none starts.
	RequireConfinement bool `json:"requireConfinement,omitempty"`
	// AllowedServers, when set, are the only servers that may be added,
	// imported, protected or started; DeniedServers never may.
	AllowedServers []ServerRule `json:"allowedServers,omitempty"`
	DeniedServers  []ServerRule `json:"deniedServers,omitempty"`
	// Network is the network's default for new servers, and the
	// destinations never allowed.
	Network *NetworkRules `json:"network,omitempty"`
	// ReachWait is how long a confined server's call waits for a person
	// ("10s", "1m"), whatever the person set.
	ReachWait string `json:"reachWait,omitempty"`
	// AllowOnce false: only lasting decisions (no "allow once").
	AllowOnce *bool `json:"allowOnce,omitempty"`
	// AuditTo are where every decision, request and refusal is also sent:
	// "journal" or "syslog" (Linux, macOS), "eventlog" (Windows).
	AuditTo []string `json:"auditTo,omitempty"`
}

// A ServerRule names servers by one of three globs ('*' any text, '?'
// one character): their name, their command (the program and its
// arguments joined by spaces: "npx -y @scope/pkg*"), or their URL.
type ServerRule struct {
	Name    string `json:"name,omitempty"`
	Command string `json:"command,omitempty"`
	URL     string `json:"url,omitempty"`
}

// NetworkRules are a policy's rules for servers' networks.
type NetworkRules struct {
	// Default is the setting a new server gets: "off", "ask" or "open".
	Default string `json:"default,omitempty"`
	// Never are destinations never allowed: "NAME:PORT", "*.NAME:PORT",
	// "IP:PORT", a port "*" for any.
	Never []string `json:"never,omitempty"`
}

// maxSize bounds a policy file: an administrator's rules, not data.
const maxSize = 1 << 20

// Parse reads a policy (JSON with comments and trailing commas). Unknown
// keys are an error naming the key, as are values that are not what their
// key takes.
func Parse(data []byte) (Policy, error) {
	if len(data) > maxSize {
		return Policy{}, fmt.Errorf("the policy is %d bytes; at most %d", len(data), maxSize)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	v, err := hujson.Parse(data)
	if err != nil {
		return Policy{}, errors.New(strings.TrimPrefix(err.Error(), "hujson: "))
	}
	v.Standardize()
	dec := json.NewDecoder(bytes.NewReader(v.Pack()))
	dec.DisallowUnknownFields()
	var p Policy
	if err := dec.Decode(&p); err != nil {
		return Policy{}, decodeError(err)
	}
	return p, p.check()
}

// decodeError says in one line what is wrong with a policy's JSON.
func decodeError(err error) error {
	msg := err.Error()
	if key, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Errorf("unknown key %s", key)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%q takes %s, not a JSON %s", te.Field, kindOf(te.Type.String()), te.Value)
	}
	return errors.New(strings.TrimPrefix(msg, "json: "))
}

func kindOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case goType == "string":
		return "a string"
	case goType == "bool", goType == "*bool":
		return "true or false"
	}
	return "an object"
}

// check refuses values a key does not take.
func (p Policy) check() error {
	for _, g := range p.NeverGrant {
		if !filepath.IsAbs(g) && !homeRelative(g) {
			return fmt.Errorf("neverGrant %q: a folder is an absolute path or starts with ~/", g)
		}
		if _, err := filepath.Match(g, ""); err != nil {
			return fmt.Errorf("neverGrant %q: %v", g, err)
		}
	}
	for _, list := range [][]ServerRule{p.AllowedServers, p.DeniedServers} {
		for _, r := range list {
			n := 0
			for _, s := range []string{r.Name, r.Command, r.URL} {
				if s != "" {
					n++
				}
			}
			if n != 1 {
				return fmt.Errorf("a server rule names one of name, command or url: %+v", r)
			}
		}
	}
	if p.Network != nil {
		switch p.Network.Default {
		case "", "off", "ask", "open":
		default:
			return fmt.Errorf("network.default %q: off, ask or open", p.Network.Default)
		}
		for _, d := range p.Network.Never {
			if _, _, ok := strings.Cut(d, ":"); !ok {
				return fmt.Errorf("network.never %q: a destination is NAME:PORT (or unix:PATH)", d)
			}
		}
	}
	if p.ReachWait != "" {
		if _, err := time.ParseDuration(p.ReachWait); err != nil {
			return fmt.Errorf("reachWait %q: a duration such as 10s or 1m", p.ReachWait)
		}
	}
	for _, a := range p.AuditTo {
		switch a {
		case "journal", "syslog", "eventlog":
		default:
			return fmt.Errorf("auditTo %q: journal, syslog or eventlog", a)
		}
	}
	return nil
}

// Set reports whether there is a policy at all (read, or broken).
func (p Policy) Set() bool { return p.Source != "" }

// NeverGranted is the neverGrant rule that holds path (absolute, clean)
// for a person whose home folder is home, "" when none does: a rule holds
// a path that it, or a folder above it, matches.
func (p Policy) NeverGranted(path, home string) string {
	path = filepath.Clean(path)
	for _, g := range p.NeverGrant {
		pattern := expandHome(g, home)
		if pattern == "" {
			continue
		}
		// A '*' never matches a separator: a pattern of k names can match
		// only the folder of k names above path (or path itself), so that
		// one folder is matched, not every folder above it.
		if prefix, ok := leading(path, strings.Count(pattern, string(filepath.Separator))); ok {
			if matched, _ := filepath.Match(foldCase(pattern), foldCase(prefix)); matched {
				return g
			}
		}
	}
	return ""
}

// leading is the first n names of the absolute path p ("/a/b" for n 2;
// on Windows `C:\a\b`), and whether p has that many.
func leading(p string, n int) (string, bool) {
	seen := 0
	v := len(filepath.VolumeName(p)) // Windows: "C:" before the first separator
	for i := v + 1; i < len(p); i++ {
		if p[i] == filepath.Separator {
			seen++
			if seen == n {
				return p[:i], true
			}
		}
	}
	if seen+1 == n && len(p) > v+1 {
		return p, true
	}
	return "", false
}

// NeverGrantedBeneath are the folders and files beneath root (existing
// ones, found now) that a neverGrant rule holds: what a server granted
// root must still not reach.
func (p Policy) NeverGrantedBeneath(root, home string) []string {
	var out []string
	for _, g := range p.NeverGrant {
		pattern := expandHome(g, home)
		if pattern == "" || !within(pattern, root) {
			continue
		}
		matches, _ := filepath.Glob(pattern)
		out = append(out, matches...)
	}
	return out
}

func within(pattern, root string) bool {
	rel, err := filepath.Rel(root, pattern)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// foldCase is s in the case paths are compared in: Windows' file names
// ignore case (a rule for C:\Users\*\Secrets holds c:\users\ada\secrets),
// others' do not.
func foldCase(s string) string {
	if runtime.GOOS == "windows" {
		return strings.ToLower(s)
	}
	return s
}

// homeRelative reports whether g names a folder in the person's home: "~",
// or "~/" (on Windows also `~\`) and the rest.
func homeRelative(g string) bool {
	return g == "~" || strings.HasPrefix(g, "~/") || strings.HasPrefix(g, "~"+string(filepath.Separator))
}

func expandHome(g, home string) string {
	switch {
	case g == "~":
		return home
	case homeRelative(g):
		if home == "" {
			return ""
		}
		return filepath.Join(home, g[2:])
	}
	return filepath.Clean(g) // on Windows, '/' written as '\'
}

// A Server is what a server rule is matched against.
type Server struct {
	Name    string
	Command string   // stdio: the program
	Args    []string // stdio: its arguments
	URL     string   // remote
}

// Denied says why the policy denies srv ("" when it does not): a rule of
// deniedServers that matches it, or, with allowedServers set, that none
// of those matches it.
func (p Policy) Denied(srv Server) string {
	for _, r := range p.DeniedServers {
		if r.matches(srv) {
			return "deniedServers has " + r.String()
		}
	}
	if p.AllowedServers == nil {
		return ""
	}
	for _, r := range p.AllowedServers {
		if r.matches(srv) {
			return ""
		}
	}
	return "it is not in allowedServers"
}

func (r ServerRule) matches(srv Server) bool {
	switch {
	case r.Name != "":
		return glob(r.Name, srv.Name)
	case r.Command != "":
		if srv.Command == "" {
			return false
		}
		return glob(r.Command, strings.Join(append([]string{srv.Command}, srv.Args...), " "))
	case r.URL != "":
		return srv.URL != "" && glob(r.URL, srv.URL)
	}
	return false
}

// String is the rule as an administrator wrote it: {"name": "x*"}.
func (r ServerRule) String() string {
	switch {
	case r.Name != "":
		return fmt.Sprintf(`{"name": %q}`, r.Name)
	case r.Command != "":
		return fmt.Sprintf(`{"command": %q}`, r.Command)
	}
	return fmt.Sprintf(`{"url": %q}`, r.URL)
}

// glob reports whether s matches pattern, where '*' is any text (spaces
// and slashes included) and '?' any one character.
func glob(pattern, s string) bool {
	px, sx := 0, 0
	nextPx, nextSx := -1, -1
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				nextPx, nextSx = px, sx+1
				px++
				continue
			case '?':
				if sx < len(s) {
					px++
					sx++
					continue
				}
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if nextPx >= 0 && nextSx <= len(s) {
			px, sx = nextPx, nextSx
			continue
		}
		return false
	}
	return true
}

// WaitFor is the reach wait the policy sets, and whether it sets one.
func (p Policy) WaitFor() (time.Duration, bool) {
	if p.ReachWait == "" {
		return 0, false
	}
	d, err := time.ParseDuration(p.ReachWait)
	return d, err == nil
}

// OnceAllowed reports whether "allow once" may be offered.
func (p Policy) OnceAllowed() bool { return p.AllowOnce == nil || *p.AllowOnce }
