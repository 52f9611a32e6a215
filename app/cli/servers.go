package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/control"
	"rootkeeper/app/secrets/spot"
	"rootkeeper/app/serverentry"
	"rootkeeper/app/words"
)

func (c *command) servers(args []string) error {
	if len(args) == 0 {
		return usagef("%q needs add, list, remove, confine, unconfine, data or network", "servers")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "add":
		return c.serversAdd(rest)
	case "data":
		return c.serversData(rest)
	case "confine", "unconfine":
		return c.serversConfine(sub == "confine", rest)
	case "network":
		return c.serversNetwork(rest)
	case "list":
		return c.serversList(rest)
	case "remove":
		f := newFlags("servers remove")
		pos, _, err := f.parse(rest)
		if err != nil {
			return err
		}
		if err := exactly("servers remove", pos, "NAME"); err != nil {
			return err
		}
		var removed app.Server
		if _, err := c.update(func(s *app.State) error {
			removed, _ = s.Server(pos[0])
			return s.RemoveServer(pos[0])
		}); err != nil {
			return err
		}
		c.forgetSecrets(removed)
		c.removeServerFiles(pos[0])
		c.printf("removed server %q and its decisions\n", pos[0])
		return nil
	}
	return usagef("unknown verb %q for %q", sub, "servers")
}

// removeServerFiles deletes what a removed server had on disk (its temp
// and data folders, its logs: app.RemoveServerFiles) when no app runs. A
// running app does it itself once it has stopped the server, which may
// still be running now.
func (c *command) removeServerFiles(name string) {
	ctx, cancel := context.WithTimeout(c.ctx, time.Second)
	defer cancel()
	if control.Call(ctx, c.store.Dir(), "ping", nil, nil) == nil {
		return
	}
	if err := app.RemoveServerFiles(c.store.Dir(), name); err != nil {
		fmt.Fprintf(c.env.Stderr, "rootkeeper: warning: some files of the removed server %q are left: %s\n", words.SafeText(name), words.SafeText(err.Error()))
	}
}

// serversAdd is `servers add NAME (--url URL | -- COMMAND [ARG...])`: it
// adds server NAME, or with --replace changes it, and says what that did.
func (c *command) serversAdd(args []string) error {
	f := newFlags("servers add")
	url := f.String("url")
	typ := f.String("type")
	headers := f.List("header")
	envs := f.List("env")
	cwd := f.String("cwd")
	mode := f.String("roots-mode")
	sampling := f.String("sampling")
	hostRoots := f.String("host-roots")
	keepArgs := f.List("keep-arg")
	confined := f.Bool("confine")
	unconfined := f.Bool("no-confine")
	replace := f.Bool("replace")
	network := f.String("network")
	pos, command, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("servers add", pos, "NAME"); err != nil {
		return err
	}
	netSetting, err := addNetwork(f.Given("network"), *network, len(command) > 0)
	if err != nil {
		return err
	}
	if *confined && *unconfined {
		return usagef("give --confine or --no-confine for server %q, not both", pos[0])
	}
	srv := app.Server{Name: pos[0], RootsMode: app.RootsMode(*mode), Sampling: app.SamplingMode(*sampling), HostRoots: app.HostRootsMode(*hostRoots), KeepArgs: *keepArgs, Network: netSetting}
	how := transportFlags{url: *url, typ: *typ, headers: *headers, envs: *envs, cwd: *cwd, confined: *confined, unconfined: *unconfined}
	if err := c.setTransport(&srv, command, how); err != nil {
		return err
	}
	var res app.PutResult
	if _, err := c.update(func(s *app.State) error {
		var err error
		res, err = s.PutServer(srv, app.PutOptions{Replace: *replace, Given: givenSettings(f), Home: c.env.Home, StateDir: c.store.Dir()})
		return err
	}); err != nil {
		return err
	}
	c.printAdded(res)
	return nil
}

// transportFlags are the options of `servers add` that say how a server
// is reached: a URL with its type and headers, or a command with its
// environment, folder and confinement.
type transportFlags struct {
	url, typ, cwd        string
	headers, envs        []string
	confined, unconfined bool
}

// setTransport fills in how srv is reached: over HTTP or SSE at how.url, or
// by running command (stdio). Options of the other kind are refused.
func (c *command) setTransport(srv *app.Server, command []string, how transportFlags) error {
	switch {
	case how.url != "" && len(command) > 0:
		return usagef("give either --url or -- COMMAND for server %q, not both", srv.Name)
	case how.url != "":
		return setURL(srv, how)
	case len(command) > 0:
		return c.setCommand(srv, command, how)
	default:
		return usagef("server %q needs --url URL or -- COMMAND [ARG...]", srv.Name)
	}
}

// setURL makes srv an HTTP server (or SSE, if --type says so) at how.url,
// sent how.headers.
func setURL(srv *app.Server, how transportFlags) error {
	srv.URL = how.url
	srv.Type = app.TransportHTTP
	if how.typ != "" {
		if how.typ != app.TransportHTTP && how.typ != app.TransportSSE {
			return usagef("invalid --type %q (want http or sse)", how.typ)
		}
		srv.Type = how.typ
	}
	if len(how.envs) > 0 || how.cwd != "" || how.confined || how.unconfined {
		return usagef("--env, --cwd, --confine and --no-confine are for stdio servers; %q has a --url", srv.Name)
	}
	var err error
	srv.Headers, err = keyValues("header", how.headers)
	return err
}

// setCommand makes srv a stdio server that runs command, with how's
// environment and folder (a relative one is taken from where the command
// line runs, and must be a folder).
func (c *command) setCommand(srv *app.Server, command []string, how transportFlags) error {
	if how.typ != "" && how.typ != app.TransportStdio {
		return usagef("invalid --type %q for a command (it is stdio)", how.typ)
	}
	if len(how.headers) > 0 {
		return usagef("--header is for http and sse servers; %q has a command", srv.Name)
	}
	srv.Type = app.TransportStdio
	srv.Command, srv.Args = command[0], command[1:]
	// --confine asks for the boundary in so many words: where Landlock
	// is missing the server is then not started. Without either flag
	// a new server is confined by default (PutServer).
	srv.Confine, srv.ConfineRequired = how.confined, how.confined
	var err error
	if srv.Env, err = keyValues("env", how.envs); err != nil {
		return err
	}
	if how.cwd != "" {
		dir := how.cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(c.env.Cwd, dir)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usagef("--cwd %q is not a folder", how.cwd)
		}
		srv.Cwd = dir
	}
	return nil
}

// givenSettings are the settings of `servers add` typed on the command
// line: those are given, and an edit keeps the others as they were.
func givenSettings(f *flags) app.Setting {
	var given app.Setting
	for flag, set := range map[string]app.Setting{"roots-mode": app.SetRootsMode, "sampling": app.SetSampling,
		"host-roots": app.SetHostRoots, "confine": app.SetConfine, "no-confine": app.SetConfine, "keep-arg": app.SetKeepArgs, "network": app.SetNetwork} {
		if f.Given(flag) {
			given |= set
		}
	}
	return given
}

// printAdded says what `servers add` did: added, replaced (a new program
// for consent or not), and what the server now is — its data kept aside,
// its slots, its confinement, its network, and where its roots show.
func (c *command) printAdded(res app.PutResult) {
	srv := res.Server
	switch {
	case res.NewProgram:
		c.printf("replaced server %q: it now runs something else, so it is a new program for consent (was: %s); %d decision(s) dropped\n", srv.Name, res.Before, res.Dropped)
	case res.Replaced:
		c.printf("replaced server %q (%s); it runs the same program and keeps its decisions\n", srv.Name, srv.Type)
	default:
		c.printf("added server %q (%s); it sees nothing until you grant it roots\n", srv.Name, srv.Type)
	}
	c.printKeptAside(srv.Name, res.KeptAside)
	c.printSlots(srv)
	if srv.Confine {
		c.printAddedConfinement(srv)
	}
	c.printAddedNetwork(srv)
	if srv.Mode() == app.RootsArgs {
		c.printf("note: in roots mode args the allowed folders are on the server's command line, which every local user can read (/proc/PID/cmdline); mode env keeps them private\n")
	}
}

// printAddedConfinement says how a server to be confined runs here: with
// which Landlock, or, where there is none it may use, whether it is not
// started or runs unconfined.
func (c *command) printAddedConfinement(srv app.Server) {
	switch abi, err := landlockABI(); {
	case err == nil:
		c.printf("%s runs %s\n", words.SafeText(srv.Name), app.CappedConfinedText(abi, kernelABI()))
	case srv.ConfineRequired || kernelABI() > 0:
		// Asked for in so many words, or the kernel has Landlock and
		// the cap (app.EnvLandlockABI) is at fault: not started.
		c.printf("warning: %v; %s will not be started until it can be\n", err, words.SafeText(srv.Name))
	default:
		c.printf("note: %s; %s runs unconfined here, and roots are advice to it (--confine: not started without the boundary)\n", err, words.SafeText(srv.Name))
	}
}

// serversConfine is `servers confine NAME` and `servers unconfine NAME`:
// the person's decision to run a stdio server confined or not, written to
// the audit log like the other decisions, and undone by the other verb.
// Confining it here asks for the boundary in so many words (where Landlock
// is missing it is then not started).
func (c *command) serversConfine(on bool, args []string) error {
	verb := "servers unconfine"
	if on {
		verb = "servers confine"
	}
	f := newFlags(verb)
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly(verb, pos, "NAME"); err != nil {
		return err
	}
	name := pos[0]
	if _, err := c.update(func(s *app.State) error {
		if err := s.SetConfinement(name, on); err != nil {
			return err
		}
		if on {
			i := slices.IndexFunc(s.Servers, func(srv app.Server) bool { return srv.Name == name })
			s.Servers[i].ConfineRequired = true
		}
		return nil
	}); err != nil {
		return err
	}
	if err := audit.Confinement(c.store.Dir(), name, on, string(app.ByCommandLine)); err != nil {
		fmt.Fprintf(c.env.Stderr, "rootkeeper: warning: cannot write the audit log: %s\n", words.SafeText(err.Error()))
	}
	if on {
		c.printf("%s runs confined from its next start (undo: rootkeeper servers unconfine %s)\n", words.SafeText(name), words.SafeText(name))
	} else {
		c.printf("%s runs unconfined from its next start: roots are advice to it, and it can reach whatever you can (undo: rootkeeper servers confine %s)\n", words.SafeText(name), words.SafeText(name))
	}
	return nil
}

func (c *command) serversList(args []string) error {
	f := newFlags("servers list")
	asJSON := f.Bool("json")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("servers list", pos); err != nil {
		return err
	}
	st, err := c.store.Load()
	if err != nil {
		return err
	}
	if *asJSON {
		return c.printJSON(redactServers(st.Servers))
	}
	if len(st.Servers) == 0 {
		c.printf("no servers yet: add one with `rootkeeper servers add NAME -- COMMAND` or `rootkeeper import FILE`\n")
		return nil
	}
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintf(tw, "NAME\tTYPE\tROOTS MODE\tTARGET\n")
	for _, s := range st.Servers {
		// Secrets and references alike are "(secret)" here.
		target := spot.ShowURL(s.Name, s.URL)
		if s.Type == app.TransportStdio {
			target = strings.Join(append([]string{s.Command}, spot.ShowArgs(s.Name, s.Args)...), " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", words.SafeText(s.Name), s.Type, s.Mode(), words.SafeText(target))
	}
	return nil
}

// importServers is `import FILE`: every server of an mcpServers file (or
// stdin, "-") added, or with --replace changed, in one change of the state.
func (c *command) importServers(args []string) error {
	f := newFlags("import")
	replace := f.Bool("replace")
	keepArgs := f.List("keep-arg")
	unconfined := f.Bool("no-confine")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("import", pos, "FILE"); err != nil {
		return err
	}
	data, err := c.readImportFile(pos[0])
	if err != nil {
		return err
	}
	cfg, err := serverentry.Parse(data)
	if err != nil {
		return &app.InputError{Msg: fmt.Sprintf("%s: %v", pos[0], err)}
	}
	if len(cfg.Servers) == 0 {
		return &app.InputError{Msg: fmt.Sprintf("%s: no server to import: %s", pos[0], skippedText(cfg.Skipped))}
	}
	servers := cfg.Servers
	var given app.Setting
	for i := range servers {
		servers[i].KeepArgs = *keepArgs
	}
	if *unconfined {
		given |= app.SetConfine // and Confine stays false
	}
	// An mcpServers file states a roots mode only where it has one; the
	// rest of Rootkeeper's settings (confinement…) stay as they were, and
	// a new stdio server is confined unless --no-confine.
	if f.Given("keep-arg") {
		given |= app.SetKeepArgs
	}
	opts := app.PutOptions{Replace: *replace, Given: given, Home: c.env.Home, StateDir: c.store.Dir()}
	r := importReport{stored: make([]app.Server, len(servers)), kept: make([]*app.KeptData, len(servers))}
	if _, err = c.update(func(s *app.State) error { return r.put(s, servers, opts) }); err != nil {
		return err
	}
	c.printImported(r, cfg.Skipped)
	return nil
}

// readImportFile reads the file an import names: stdin for "-", a relative
// path from where the command line runs.
func (c *command) readImportFile(name string) ([]byte, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(c.env.Stdin)
	} else {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(c.env.Cwd, path)
		}
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, &app.InputError{Msg: fmt.Sprintf("cannot read %q: %v", name, errText(err))}
	}
	return data, nil
}

// put stores servers in s, each through PutServer with opts (a server
// whose entry states a roots mode gives it too), and records in r what
// each became. It runs inside one change of the state: a refusal leaves
// the state unsaved.
func (r *importReport) put(s *app.State, servers []app.Server, opts app.PutOptions) error {
	r.added, r.replaced, r.changed = nil, nil, nil
	// Every refusal comes before the first server is put: putting one
	// may keep its data folder aside on disk, which a later refusal
	// (the state not saved) would leave unrecorded.
	for _, srv := range servers {
		if _, exists := s.Server(srv.Name); exists && !opts.Replace {
			return &app.InputError{Msg: fmt.Sprintf("server %q already exists (use --replace to overwrite it)", srv.Name)}
		}
	}
	for i, srv := range servers {
		o := opts
		if srv.RootsMode != "" {
			o.Given |= app.SetRootsMode
		}
		res, err := s.PutServer(srv, o)
		if err != nil {
			return err
		}
		r.stored[i], r.kept[i] = res.Server, res.KeptAside
		switch {
		case res.NewProgram:
			// A server that now runs something else is a new
			// program: its decisions went, and the person is told.
			r.changed = append(r.changed, programChange{name: srv.Name, before: res.Before, after: app.Program(srv), dropped: res.Dropped})
			r.replaced = append(r.replaced, srv.Name)
		case res.Replaced:
			r.replaced = append(r.replaced, srv.Name)
		default:
			r.added = append(r.added, srv.Name)
		}
	}
	return nil
}

// importReport is what an import stored: each server as stored and its
// data folder kept aside (if any), in the order of the file, and which
// were added, replaced, and replaced by another program.
type importReport struct {
	stored          []app.Server
	kept            []*app.KeptData
	added, replaced []string
	changed         []programChange
}

// printImported says what an import did, and what it left out (skipped).
func (c *command) printImported(r importReport, skipped []serverentry.Skipped) {
	slices.Sort(r.added)
	c.printf("imported %d server(s):\n", len(r.added)+len(r.replaced))
	for _, srv := range r.stored {
		c.printf("  %s: %s\n", words.SafeText(srv.Name), app.Program(srv))
	}
	for _, srv := range r.stored {
		c.printSlots(srv)
	}
	if len(r.replaced) > 0 {
		c.printf("replaced: %s\n", words.SafeText(strings.Join(r.replaced, ", ")))
	}
	for _, sk := range skipped {
		c.printf("skipped %s: %s\n", words.SafeText(sk.Name), words.SafeText(sk.Why))
	}
	for _, ch := range r.changed {
		c.printf("%s now runs something else, so it is a new program for consent: %s (was: %s); %d decision(s) dropped, it will be asked again\n",
			words.SafeText(ch.name), ch.after, ch.before, ch.dropped)
	}
	if len(r.added)+len(r.changed) > 0 {
		c.printf("new servers, and servers that now run something else, see no folder until you grant one\n")
	}
	if same := len(r.replaced) - len(r.changed); same > 0 {
		c.printf("%d replaced server(s) run the same program and keep their decisions\n", same)
	}
	for i, srv := range r.stored {
		c.printKeptAside(srv.Name, r.kept[i])
	}
}

// skippedText says which entries an import left out, and why: the first
// three, and how many more.
func skippedText(skipped []serverentry.Skipped) string {
	var parts []string
	for _, sk := range skipped[:min(3, len(skipped))] {
		parts = append(parts, words.SafeText(sk.Name)+": "+words.SafeText(sk.Why))
	}
	if more := len(skipped) - len(parts); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}

// printSlots says which folders and files a server's configuration names
// (each waits for the person's decision before the server starts), and
// which values that look like paths stay unasked by --keep-arg.
func (c *command) printSlots(srv app.Server) {
	for _, sl := range srv.Slots {
		kind := "folder"
		switch {
		case sl.Socket:
			kind = "socket"
		case sl.File:
			kind = "file"
		}
		c.printf("%s is configured with the %s %s (%s): it starts once you allow it (`rootkeeper grant %s %s`)\n",
			srv.Name, kind, sl.Path, sl.Where(), words.ShellQuote(srv.Name), words.ShellQuote(sl.Path))
	}
	for _, k := range srv.KeepArgs {
		c.printf("warning: %s keeps %s on its command line (--keep-arg): if it is a folder, the server reaches it whatever you decide\n", srv.Name, k)
	}
}

// programChange is a replaced server that runs something else now.
type programChange struct {
	name, before, after string
	dropped             int
}

// errText drops the "open PATH:" prefix the os package adds, since the
// message already names the file.
func errText(err error) string {
	var pe *os.PathError
	if e, ok := err.(*os.PathError); ok {
		pe = e
		return pe.Err.Error()
	}
	return err.Error()
}
