// Package cli is Rootkeeper's command line: it parses the verbs and runs them
// against the state store. main wires it; the parts that need packages app
// must not import (the scanner, the MCP client, the GUI) come in through
// Extensions.
//
// Exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input, always with
// one line on stderr that names the offending value.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// Env is the world a command runs in.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Cwd resolves relative paths.
	Cwd string
	// Home is the person's home folder (default search folders, warnings).
	Home string
}

// Extensions are the verbs whose work lives outside app. A nil field makes
// its verb fail with a clear error.
type Extensions struct {
	// Scan finds projects (package detect).
	Scan app.Scanner
	// DefaultSearchFolders lists the folders scanned when none are
	// configured or given.
	DefaultSearchFolders func(home string) []string
	// GUI opens the window and tray; it runs when no verb is given.
	GUI func(ctx context.Context, store *app.Store) error
	// GUIHidden starts the app in the tray with its window closed
	// (`rootkeeper --hidden`, what the start-at-login entry runs).
	GUIHidden func(ctx context.Context, store *app.Store) error
	// Window is the window process the running app starts when the
	// window is asked for (`rootkeeper __window`, not for people: it
	// attaches to the running app and ends when closed).
	Window func(ctx context.Context, store *app.Store) error
	// Headless runs everything but the GUI until ctx ends.
	Headless func(ctx context.Context, store *app.Store) error
	// Audit prints the audit log: `audit [--server S] [--json]`.
	Audit func(args []string, stateDir string, stdout io.Writer) error
	// Bridge runs `bridge NAME`: relays between a host on stdin/stdout and
	// server NAME until the host closes stdin. Its stderr is the host's:
	// it replaces the store's BeforeSave, whose warnings name any server.
	Bridge func(ctx context.Context, store *app.Store, server string, stdin io.Reader, stdout, stderr io.Writer) error
}

// WindowVerb starts the window process (Extensions.Window).
const WindowVerb = "__window"

const usage = `usage: rootkeeper [--state-dir DIR] [VERB ...]

With no verb, opens the window and the tray icon; --hidden starts in the
tray with the window closed (as at login).

  headless                          run everything but the GUI until interrupted
  bridge NAME                       for hosts: a stdio MCP server that starts server NAME
                                    and relays to it, its roots coming from Rootkeeper
  hosts list [--json] [--known] [--project DIR]  the MCP hosts found here and their servers (--known: every host known and its files)
  hosts protect HOST|--all [--dry-run] [--keep] [--project DIR]
                                    put each server of HOST behind the bridge (backed up first;
                                    --keep: protect it again when the host writes its own back)
  hosts restore HOST|--all [--dry-run] give HOST's config files back
  scan [--json] [--depth N] [DIR...] find git repositories and projects
  roots add PATH [--name N] [--enable]
  roots list [--json]
  roots check ROOT [--json]         check ROOT's access again now (the running app's check, whose
                                    health servers follow at once); exit 1 if it does not pass
  roots remove|enable|disable ROOT  ROOT is a path or a root's name
  servers add NAME [--replace] [--env K=V] [--cwd DIR] [--roots-mode M] [--sampling S] [--host-roots H] [--keep-arg A] [--confine|--no-confine] [--network off|ask|open] -- COMMAND [ARG...]
  servers add NAME --url URL [--replace] [--type http|sse] [--header K=V|'K: V'] [--roots-mode M] [--sampling S] [--host-roots H]
  servers list [--json]
  servers remove NAME               forget NAME, its decisions, secrets and files (temp, data, logs)
  servers confine|unconfine NAME    run a stdio server confined, or not (a decision, audited)
  servers data NAME [--json]        its data folder, and the data of programs it ran before, kept aside
  servers data NAME use|remove [FOLDER]
                                    give kept-aside data to the program it runs now, or delete it
  servers network NAME [--json]     its network setting, and every destination it reached
  servers network NAME off|ask|open|only DEST...|pin|allow DEST...|deny DEST...
                                    where a confined server's sockets may reach (pin: only what
                                    it reached so far; allow: always; deny: remembered)
  import FILE|- [--replace] [--keep-arg A] [--no-confine]  add servers from a host's JSON config, in any host's shape
  private-env add|remove VAR... | list [--json]
                                    variables of this environment no server gets
  grant SERVER ROOT [--until-quit|--once]  let SERVER see ROOT (--once: let the reads of a confined
                                    server waiting on ROOT through this once, nothing more; ROOT
                                    may be the folder (its reads and listings) or a file a call
                                    named (its reads); a change is never let through this way)
  grant SERVER --once --call ID[,ID]  let exactly the waiting calls named through once, changes
                                    included (the ids status shows; --call repeatable)
  deny SERVER ROOT                  remember that SERVER may not see ROOT
  revoke SERVER ROOT                forget the decision (ROOT becomes undecided), or take away
                                    a folder SERVER needs to run
  pause | resume                    stop or restart all sharing
  settings [--json] | settings reach-wait DURATION
                                    how long a confined server's call past its folders waits
                                    while you are asked (default 10s)
  status [--json]                   what each server may see, and live state
  audit [--server S] [--json]       what each server was told and tried, your decisions, and
                                    the noise counted, oldest first
  sampling show [--json] | clear    the model that answers servers' sampling requests
  sampling set --provider anthropic|openai --url URL --model M [--api-key-env VAR] [--max-tokens N]
  resources list SERVER [--json]    a connected server's resources (URI, name, MIME); needs the app running
  resources read SERVER URI [--json] print a resource (blobs: size and MIME; --json: base64)
  autostart on|off|status [--json]  start at login, in the tray with the window closed
  doctor [--json]                   check tray host, Landlock, inotify, keyring, servers' programs, hosts' files

Folders and files named on a server's command line or in its env stay there
as slots: each is asked about (grant SERVER FOLDER), and the server starts,
exactly as configured, only once every slot is allowed (until then status says
it is held and why). --keep-arg A marks a value that only looks like a path as
no slot.
Stdio servers are confined (Linux): each runs under Landlock, reaching only
its granted folders, a private temp folder, its own data folder and what it
needs to run. --no-confine turns that off; where Landlock is missing such a
server runs unconfined and status says so, while one added with --confine is
then not started. When a confined server reaches past its folders, the window
asks (its call waits, reach-wait); with nobody to ask (headless, a bridge with
no app) the call is refused at once and the request waits in status. Allow
once lets exactly the calls shown through, each with its own access: status
lists each waiting call with a short id and the command for it; a write, a
truncate, a create or a replace goes through once only when named by its id.
Only grant (without --once) widens its folders. A folder a confined server
reached for, or whose refusal stopped its start (~/.kube), is granted to it
alone: it needs it to run, so it joins its ruleset, not the roots others are
asked about. A server whose command comes to run another program starts with
an empty data folder; the old one is kept aside until you give it to the new
program or remove it (servers data NAME use|remove).
A confined server's network (N) is off (nothing outside its sandbox, loopback
included), ask (each new destination asked at first contact, like a folder:
allow once with grant --once --call ID, always with servers network allow, or
deny), only DEST... (these, the rest asked) or open (every destination let
through, watched). A new server known to need no network is off, any other
open; status lists what each reached, by the name it looked up. DEST is
NAME:PORT, *.NAME:PORT, IP:PORT, [IPv6]:PORT or unix:/PATH (PORT may be *).
ROOTKEEPER_LANDLOCK_ABI=N
confines at Landlock ABI N at most (status and doctor then say "capped").
Roots modes: protocol (default), args, env, off.
Host roots (H, for bridged servers): request (default: the host's folders are
requests to decide) or follow (a session sees its allowed folders narrowed to
the host's).
Sampling (S): review (default: a person reviews each request in the window;
headless, requests are rejected) or off (not offered to the server).
Exit codes: 0 ok, 1 runtime failure, 2 bad usage or input.
`

// Run runs one command line (without the program name) and returns the exit
// code.
func Run(ctx context.Context, args []string, env Env, ext Extensions) int {
	err := run(ctx, args, env, ext)
	if err == nil {
		return 0
	}
	msg := words.SafeText(err.Error())
	fmt.Fprintf(env.Stderr, "rootkeeper: %s\n", msg)
	return exitCode(err)
}

func exitCode(err error) int {
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return 1
}

// globals pulls --state-dir (and --help, --version) out of the arguments
// before a "--", wherever they stand.
func globals(args []string) (stateDir string, rest []string, help, version bool, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i:]...)
			return stateDir, rest, help, version, nil
		case a == "--state-dir" || a == "-state-dir":
			if i+1 >= len(args) || args[i+1] == "" {
				return "", nil, false, false, usagef("--state-dir needs a folder")
			}
			i++
			stateDir = args[i]
		case strings.HasPrefix(a, "--state-dir="):
			stateDir = strings.TrimPrefix(a, "--state-dir=")
			if stateDir == "" {
				return "", nil, false, false, usagef("--state-dir needs a folder")
			}
		case a == "--help" || a == "-h" || a == "help" && len(rest) == 0:
			help = true
		case a == "--version" || a == "version" && len(rest) == 0:
			version = true
		default:
			rest = append(rest, a)
		}
	}
	return stateDir, rest, help, version, nil
}

// run is one invocation of the command line: the global options, then
// the state it works on, then the verb (none starts the app with a window).
func run(ctx context.Context, args []string, env Env, ext Extensions) error {
	stateDir, args, help, version, err := globals(args)
	if err != nil {
		return err
	}
	if help {
		io.WriteString(env.Stdout, usage)
		return nil
	}
	if version {
		fmt.Fprintf(env.Stdout, "rootkeeper %s\n", app.Version)
		return nil
	}
	store, err := openStore(stateDir, env)
	if err != nil {
		return err
	}
	c := &command{ctx: ctx, env: env, ext: ext, store: store}
	if len(args) == 0 {
		if ext.GUI == nil {
			return errors.New("this build has no GUI; try `rootkeeper headless`")
		}
		return ext.GUI(ctx, store)
	}
	return c.dispatch(args[0], args[1:])
}

// openStore opens the state in stateDir (the default folder if ""): a
// damaged file is reported on stderr as it is set aside, and every save
// seals the secrets typed in the clear.
func openStore(stateDir string, env Env) (*app.Store, error) {
	if stateDir == "" {
		var err error
		if stateDir, err = app.DefaultStateDir(); err != nil {
			return nil, err
		}
	}
	if fi, err := os.Stat(stateDir); err == nil && !fi.IsDir() {
		return nil, usagef("--state-dir %q is not a folder", stateDir)
	}
	store, err := app.OpenStore(stateDir)
	if err != nil {
		return nil, err
	}
	store.OnCorrupt = func(e *app.CorruptError) { fmt.Fprintf(env.Stderr, "rootkeeper: warning: %s\n", e.Error()) }
	store.BeforeSave = sealer(env).Seal
	return store, nil
}

// dispatch runs verb with the arguments that follow it.
func (c *command) dispatch(verb string, rest []string) error {
	switch verb {
	case "headless", WindowVerb, "--hidden":
		return c.startApp(verb, rest)
	case "autostart":
		return c.autostart(rest)
	case "doctor":
		return c.doctor(rest)
	case "scan":
		return c.scan(rest)
	case "roots":
		return c.roots(rest)
	case "servers":
		return c.servers(rest)
	case "sampling":
		return c.sampling(rest)
	case "resources":
		return c.resources(rest)
	case "import":
		return c.importServers(rest)
	case "private-env":
		return c.privateEnv(rest)
	case "bridge":
		return c.bridge(rest)
	case "hosts":
		return c.hostsVerb(rest)
	case "grant":
		return c.decide("grant", rest, app.Allow)
	case "deny":
		return c.decide("deny", rest, app.Deny)
	case "revoke":
		return c.revoke(rest)
	case "pause", "resume":
		if err := exactly(verb, rest); err != nil {
			return err
		}
		return c.setPaused(verb == "pause")
	case "status":
		return c.status(rest)
	case "settings":
		return c.settings(rest)
	case "audit":
		if c.ext.Audit == nil {
			return errors.New("this build has no audit log reader")
		}
		return c.ext.Audit(rest, c.store.Dir(), c.env.Stdout)
	}
	return usagef("unknown verb %q (try --help)", verb)
}

// startApp runs the app the way verb asks: headless (everything but the
// GUI), the window process of an app already running (WindowVerb), or in
// the tray with its window closed (--hidden, what the start-at-login entry
// runs). None takes arguments; a build without what it needs says so.
func (c *command) startApp(verb string, rest []string) error {
	if err := exactly(verb, rest); err != nil {
		return err
	}
	switch verb {
	case "headless":
		if c.ext.Headless == nil {
			return errors.New("this build cannot run headless")
		}
		return c.ext.Headless(c.ctx, c.store)
	case WindowVerb:
		if c.ext.Window == nil {
			return errors.New("this build has no GUI")
		}
		return c.ext.Window(c.ctx, c.store)
	default: // --hidden
		if c.ext.GUIHidden == nil {
			return errors.New("this build has no GUI; try `rootkeeper headless`")
		}
		return c.ext.GUIHidden(c.ctx, c.store)
	}
}

// command carries what every verb needs.
type command struct {
	ctx   context.Context
	env   Env
	ext   Extensions
	store *app.Store
}

func (c *command) update(fn func(*app.State) error) (app.State, error) {
	return c.store.Update(fn)
}

func (c *command) printJSON(v any) error {
	enc := json.NewEncoder(c.env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Every string argument goes through words.SafeText: names, paths and
// whatever a server reported are not Rootkeeper's words, and must not forge
// lines or drive the terminal. Text meant to span lines is written with
// words.SafeLines instead.
func (c *command) printf(format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = words.SafeText(s)
		}
	}
	fmt.Fprintf(c.env.Stdout, format, args...)
}
