// Package doctor is `rootkeeper doctor`: it checks what a person would
// otherwise have to ask about — is there a tray to hide in, can servers be
// confined, will folder watches fit, is the keyring there, can each server's
// program be found — and says what to do about each problem.
//
// Every probe of the system comes in through Options, so that the checks
// are tested against any machine; main and the command line pass the real
// ones (package trayhost, mcp/confine through cli.Landlock and
// cli.LandlockKernel, the OS keyring, /proc).
package doctor

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"rootkeeper/app"
	"rootkeeper/app/policy"
	"rootkeeper/app/secrets"
)

// Check is the outcome of one check.
type Check struct {
	// Name says what was checked ("tray host", "server fs").
	Name string `json:"name"`
	// OK is false for a problem.
	OK bool `json:"ok"`
	// Detail says what was found.
	Detail string `json:"detail"`
	// Fix says what to do; empty when OK.
	Fix string `json:"fix,omitempty"`
}

// Options are the probes. A nil probe skips its check (it does not apply
// on this platform or this build).
type Options struct {
	// State is the saved state: its servers and roots.
	State app.State
	// TrayHost reports whether the desktop shows tray icons.
	TrayHost func() bool
	// Landlock is the Landlock ABI confined servers get, or why there is
	// none.
	Landlock func() (int, error)
	// LandlockKernel is the kernel's own Landlock ABI, whatever caps the
	// one servers get (app.EnvLandlockABI); nil: unknown.
	LandlockKernel func() (int, error)
	// Isolation reports whether confined servers get a network of their
	// own (names shown, UDP bounded), and why not; nil skips the check.
	Isolation func() (bool, string)
	// Keyring answers nil when the OS keyring is reachable.
	Keyring func() error
	// ProcSys is /proc/sys, where the inotify limits are read (Linux).
	ProcSys string
	// LookPath finds a program as exec.LookPath does.
	LookPath func(string) (string, error)
	// Autostart reports whether the app starts at login, and where that is
	// kept.
	Autostart func() (bool, string, error)
	// Extra checks from outside app (e.g. the hosts' protected files).
	Extra func() []Check
}

// Run runs every check that applies.
func Run(o Options) []Check {
	out := []Check{orgPolicy()}
	if o.TrayHost != nil {
		out = append(out, trayHost(o.TrayHost()))
	}
	if o.Autostart != nil {
		out = append(out, autostart(o.Autostart()))
	}
	if o.Landlock != nil {
		out = append(out, landlock(o.State, o.Landlock, o.LandlockKernel))
	}
	if o.Isolation != nil {
		out = append(out, network(o.State, o.Isolation))
	}
	if o.ProcSys != "" {
		out = append(out, inotify(o.State, o.ProcSys))
	}
	if o.Keyring != nil {
		out = append(out, keyring(o.State, o.Keyring()))
	}
	if o.LookPath != nil {
		out = append(out, programs(o.State, o.LookPath)...)
	}
	if o.Extra != nil {
		out = append(out, o.Extra()...)
	}
	return out
}

// Problems counts the checks that failed.
func Problems(checks []Check) int {
	n := 0
	for _, c := range checks {
		if !c.OK {
			n++
		}
	}
	return n
}

func trayHost(present bool) Check {
	if present {
		return Check{Name: "tray host", OK: true, Detail: "the desktop shows tray icons (a StatusNotifierWatcher is on the session bus)"}
	}
	return Check{Name: "tray host", Detail: "no tray host on the session bus: closing the window quits Rootkeeper, and a start at login opens the window",
		Fix: "GNOME: install and enable the AppIndicator extension (Debian: gnome-shell-extension-appindicator); other desktops: add the system tray / status notifier applet to the panel"}
}

func autostart(on bool, where string, err error) Check {
	switch {
	case err != nil:
		return Check{Name: "start at login", Detail: fmt.Sprintf("cannot read %s: %v", where, err), Fix: "rootkeeper autostart on (or off) rewrites it"}
	case on:
		return Check{Name: "start at login", OK: true, Detail: "on (" + where + ")"}
	}
	return Check{Name: "start at login", OK: true, Detail: "off; `rootkeeper autostart on` starts it in the tray at login"}
}

// landlock checks the Landlock ABI confined servers get: the kernel's,
// or the one app.EnvLandlockABI caps it at (said, with how to lift it),
// or why there is none, and which servers that leaves unconfined or not
// started.
func landlock(st app.State, abi, kernel func() (int, error)) Check {
	var required, byDefault []string
	for _, s := range st.Servers {
		switch {
		case !s.Confine || s.Type != app.TransportStdio:
		case s.ConfineRequired:
			required = append(required, s.Name)
		default:
			byDefault = append(byDefault, s.Name)
		}
	}
	kernelABI, kernelErr := 0, errors.New("unknown")
	if kernel != nil {
		kernelABI, kernelErr = kernel()
	}
	n, err := abi()
	if err == nil {
		detail := fmt.Sprintf("ABI %d: confined servers reach only their folders, their own data and what they need to run", n)
		if kernelABI > n {
			detail = fmt.Sprintf("ABI %d (capped: %s=%d; the kernel offers %d, unset the variable to confine at %d): confined servers reach only their folders, their own data and what they need to run",
				n, app.EnvLandlockABI, n, kernelABI, kernelABI)
		}
		if n < app.UnixSocketABI {
			detail += fmt.Sprintf("; below ABI %d Rootkeeper checks each connect of their unix sockets itself", app.UnixSocketABI)
		}
		return Check{Name: "Landlock", OK: true, Detail: detail}
	}
	if kernelErr == nil {
		// The kernel has Landlock: the cap is at fault, and no confined
		// server is started while it is.
		c := Check{Name: "Landlock", Detail: fmt.Sprintf("%v", err),
			Fix: fmt.Sprintf("set %s to a number from 1 to %d, or unset it", app.EnvLandlockABI, kernelABI)}
		if names := slices.Concat(required, byDefault); len(names) > 0 {
			c.Detail += fmt.Sprintf("; these servers are not started: %s", strings.Join(names, ", "))
		}
		return c
	}
	c := Check{Name: "Landlock", OK: len(required)+len(byDefault) == 0, Detail: fmt.Sprintf("%v", err)}
	if len(byDefault) > 0 {
		c.Detail += fmt.Sprintf("; these servers run unconfined here, and roots are only advice to them: %s", strings.Join(byDefault, ", "))
	}
	if len(required) > 0 {
		c.Detail += fmt.Sprintf("; these servers were asked to be confined and are not started: %s", strings.Join(required, ", "))
	}
	switch {
	case len(required)+len(byDefault) > 0:
		c.Fix = "use Linux 5.13 or newer with Landlock enabled (lsm=…,landlock on the kernel command line)"
		if len(required) > 0 {
			c.Fix += ", or `rootkeeper servers unconfine NAME` for those not started"
		}
	default:
		c.Detail += " (no server is confined)"
	}
	return c
}

// inotify compares the per-user watch limit with what the roots need: a
// watch on each enabled root and one on its parent (to see it deleted or
// renamed). Past the limit the app polls, and says so.
func inotify(st app.State, procSys string) Check {
	path := filepath.Join(procSys, "fs", "inotify", "max_user_watches")
	data, err := os.ReadFile(path)
	if err != nil {
		return Check{Name: "inotify", OK: true, Detail: fmt.Sprintf("cannot read %s (%v); roots are polled if watches run out", path, err)}
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return Check{Name: "inotify", OK: true, Detail: fmt.Sprintf("%s holds %q", path, strings.TrimSpace(string(data)))}
	}
	need := 0
	for _, r := range st.Roots {
		if r.Enabled {
			need += 2
		}
	}
	c := Check{Name: "inotify", Detail: fmt.Sprintf("max_user_watches %d, Rootkeeper needs %d for %d enabled roots (editors and other watchers share the limit)", limit, need, need/2)}
	// Other programs of the same user (editors, build tools) use most of
	// the limit; ask for generous headroom.
	if limit >= need+8192 {
		c.OK = true
		return c
	}
	c.Fix = "raise it: echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/90-inotify.conf && sudo sysctl --system (until then the roots are polled)"
	return c
}

func keyring(st app.State, reach error) Check {
	var refs, plain []string
	for _, s := range st.Servers {
		sealed, clear := secrets.Where(s)
		for _, w := range sealed {
			refs = append(refs, s.Name+" "+w)
		}
		for _, w := range clear {
			plain = append(plain, s.Name+" "+w)
		}
	}
	slices.Sort(refs)
	slices.Sort(plain)
	c := Check{Name: "keyring"}
	switch {
	case reach == nil && len(plain) == 0:
		c.OK = true
		c.Detail = fmt.Sprintf("reachable; it holds %d secret(s) of servers, state.json none", len(refs))
	case reach == nil:
		c.Detail = fmt.Sprintf("reachable, but secrets are still in state.json: %s", strings.Join(plain, ", "))
		c.Fix = "any command that changes the state moves them into the keyring, e.g. `rootkeeper resume`"
	case len(refs) > 0:
		c.Detail = fmt.Sprintf("not reachable (%v): servers whose secrets are in it cannot start (%s)", reach, strings.Join(refs, ", "))
		c.Fix = "unlock or start the keyring (GNOME Keyring, KWallet: a Secret Service on the session bus) and try again"
	case len(plain) > 0:
		c.Detail = fmt.Sprintf("not reachable (%v): secrets stay in state.json, readable by you alone: %s", reach, strings.Join(plain, ", "))
		c.Fix = "start a Secret Service (Debian: gnome-keyring) in your session; the next change of the state moves them"
	default:
		c.OK = true
		c.Detail = fmt.Sprintf("not reachable (%v); no server has secrets, so nothing needs it yet", reach)
	}
	return c
}

// runtimes are the launchers MCP servers are commonly started with, and
// what to install when one is missing.
var runtimes = map[string]string{
	"npx": "Node.js (Debian: apt install nodejs npm)", "node": "Node.js (Debian: apt install nodejs)",
	"npm": "Node.js (Debian: apt install nodejs npm)", "pnpm": "pnpm (npm install -g pnpm)",
	"yarn": "Yarn (npm install -g yarn)", "bunx": "Bun (https://bun.sh)", "bun": "Bun (https://bun.sh)",
	"uvx": "uv (https://docs.astral.sh/uv/)", "uv": "uv (https://docs.astral.sh/uv/)",
	"python3": "Python 3 (Debian: apt install python3)", "python": "Python (Debian: apt install python3)",
	"docker": "Docker (https://docs.docker.com/engine/install/)", "deno": "Deno (https://deno.land)",
}

// programs checks that each stdio server's program can be found, and for
// npx that node, which runs it, can be found too.
func programs(st app.State, lookPath func(string) (string, error)) []Check {
	var out []Check
	servers := slices.Clone(st.Servers)
	slices.SortFunc(servers, func(a, b app.Server) int { return cmp.Compare(a.Name, b.Name) })
	for _, s := range servers {
		if s.Type != app.TransportStdio {
			continue
		}
		name := "server " + s.Name
		cmd := s.Command
		if !filepath.IsAbs(cmd) && strings.ContainsRune(cmd, filepath.Separator) && s.Cwd != "" {
			cmd = filepath.Join(s.Cwd, cmd)
		}
		path, err := lookPath(cmd)
		base := strings.TrimSuffix(filepath.Base(s.Command), ".exe")
		if err != nil {
			c := Check{Name: name, Detail: fmt.Sprintf("its program %q is not found: %v", s.Command, firstLine(err))}
			if what, ok := runtimes[base]; ok {
				c.Fix = "install " + what
			} else {
				c.Fix = fmt.Sprintf("install %s, or give its full path: rootkeeper servers remove %s, then servers add again", s.Command, s.Name)
			}
			out = append(out, c)
			continue
		}
		if base == "npx" || base == "npm" {
			if _, err := lookPath("node"); err != nil {
				out = append(out, Check{Name: name, Detail: fmt.Sprintf("%s is %s but node, which runs it, is not found", s.Command, path), Fix: "install " + runtimes["node"]})
				continue
			}
		}
		out = append(out, Check{Name: name, OK: true, Detail: "runs " + path})
	}
	return out
}

func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// SystemLookPath is exec.LookPath, the default for Options.LookPath.
var SystemLookPath = exec.LookPath

// orgPolicy is the organisation's policy: which file, what it sets, or
// why it cannot be used (then nothing can be granted).
func orgPolicy() Check {
	c := Check{Name: "organisation's policy", OK: true, Detail: "none (" + policy.Location() + " is not there)"}
	p := app.Policy()
	if !p.Set() {
		return c
	}
	c.Detail = app.PolicyText()
	if p.Broken != "" {
		c.OK = false
		c.Fix = "an administrator fixes " + p.Source + ": " + p.Broken
	}
	return c
}
