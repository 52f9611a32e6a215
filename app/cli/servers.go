package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"rootkeeper/app"
)

func (c *command) servers(args []string) error {
	if len(args) == 0 {
		return usagef("%q needs add, list or remove", "servers")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "add":
		return c.serversAdd(rest)
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
		c.printf("removed server %q and its decisions\n", pos[0])
		return nil
	}
	return usagef("unknown verb %q for %q", sub, "servers")
}

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
	pos, command, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("servers add", pos, "NAME"); err != nil {
		return err
	}
	srv := app.Server{Name: pos[0], RootsMode: app.RootsMode(*mode), Sampling: app.SamplingMode(*sampling), HostRoots: app.HostRootsMode(*hostRoots), KeepArgs: *keepArgs}
	switch {
	case *url != "" && len(command) > 0:
		return usagef("give either --url or -- COMMAND for server %q, not both", srv.Name)
	case *url != "":
		srv.URL = *url
		srv.Type = app.TransportHTTP
		if *typ != "" {
			if *typ != app.TransportHTTP && *typ != app.TransportSSE {
				return usagef("invalid --type %q (want http or sse)", *typ)
			}
			srv.Type = *typ
		}
		if len(*envs) > 0 || *cwd != "" || *confined {
			return usagef("--env, --cwd and --confine are for stdio servers; %q has a --url", srv.Name)
		}
		if srv.Headers, err = keyValues("header", *headers); err != nil {
			return err
		}
	case len(command) > 0:
		if *typ != "" && *typ != app.TransportStdio {
			return usagef("invalid --type %q for a command (it is stdio)", *typ)
		}
		if len(*headers) > 0 {
			return usagef("--header is for http and sse servers; %q has a command", srv.Name)
		}
		srv.Type = app.TransportStdio
		srv.Command, srv.Args = command[0], command[1:]
		srv.Confine = *confined
		if srv.Env, err = keyValues("env", *envs); err != nil {
			return err
		}
		if *cwd != "" {
			dir := *cwd
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(c.env.Cwd, dir)
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return usagef("--cwd %q is not a folder", *cwd)
			}
			srv.Cwd = dir
		}
	default:
		return usagef("server %q needs --url URL or -- COMMAND [ARG...]", srv.Name)
	}
	srv, moved := app.TakeFolders(srv, c.env.Home)
	if _, err := c.update(func(s *app.State) error {
		if err := s.AddServer(srv); err != nil {
			return err
		}
		return s.RequestFolders(srv.Name, moved)
	}); err != nil {
		return err
	}
	c.printf("added server %q (%s); it sees nothing until you grant it roots\n", srv.Name, srv.Type)
	c.printMoved(srv, moved)
	if srv.Confine {
		if abi, err := landlockABI(); err != nil {
			c.printf("warning: %v; %s will not be started until it can be\n", err, app.SafeText(srv.Name))
		} else {
			c.printf("%s runs confined (Landlock ABI %d): it can reach its granted folders and what it needs to run, nothing else\n", app.SafeText(srv.Name), abi)
		}
	}
	if srv.Mode() == app.RootsArgs {
		c.printf("note: in roots mode args the allowed folders are on the server's command line, which every local user can read (/proc/PID/cmdline); mode env keeps them private\n")
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
	for _, s := range redactServers(st.Servers) {
		target := s.URL
		if s.Type == app.TransportStdio {
			target = strings.Join(append([]string{s.Command}, s.Args...), " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", app.SafeText(s.Name), s.Type, s.Mode(), app.SafeText(target))
	}
	return nil
}

func (c *command) importServers(args []string) error {
	f := newFlags("import")
	replace := f.Bool("replace")
	keepArgs := f.List("keep-arg")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("import", pos, "FILE"); err != nil {
		return err
	}
	var data []byte
	if pos[0] == "-" {
		data, err = io.ReadAll(c.env.Stdin)
	} else {
		path := pos[0]
		if !filepath.IsAbs(path) {
			path = filepath.Join(c.env.Cwd, path)
		}
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return &app.InputError{Msg: fmt.Sprintf("cannot read %q: %v", pos[0], errText(err))}
	}
	servers, err := app.ParseServerConfig(data)
	if err != nil {
		return &app.InputError{Msg: fmt.Sprintf("%s: %v", pos[0], err)}
	}
	moved := map[string][]app.MovedFolder{}
	for i := range servers {
		servers[i].KeepArgs = *keepArgs
		servers[i], moved[servers[i].Name] = app.TakeFolders(servers[i], c.env.Home)
	}
	var added, replaced []string
	var changed []programChange
	_, err = c.update(func(s *app.State) error {
		added, replaced, changed = nil, nil, nil
		for _, srv := range servers {
			if old, exists := s.Server(srv.Name); exists {
				if !*replace {
					return &app.InputError{Msg: fmt.Sprintf("server %q already exists (use --replace to overwrite it)", srv.Name)}
				}
				// A server that now runs something else is a new program:
				// its decisions go, and the person is told what changed.
				dropped, err := s.ReplaceServer(srv, false)
				if err != nil {
					return err
				}
				if !app.SameProgram(old, srv) {
					changed = append(changed, programChange{name: srv.Name, before: app.Program(old), after: app.Program(srv), dropped: dropped})
				}
				replaced = append(replaced, srv.Name)
				if err := s.RequestFolders(srv.Name, moved[srv.Name]); err != nil {
					return err
				}
				continue
			}
			if err := s.AddServer(srv); err != nil {
				return err
			}
			added = append(added, srv.Name)
			if err := s.RequestFolders(srv.Name, moved[srv.Name]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(added)
	c.printf("imported %d server(s):\n", len(added)+len(replaced))
	for _, srv := range servers {
		c.printf("  %s: %s\n", app.SafeText(srv.Name), app.Program(srv))
	}
	for _, srv := range servers {
		c.printMoved(srv, moved[srv.Name])
	}
	if len(replaced) > 0 {
		c.printf("replaced: %s\n", app.SafeText(strings.Join(replaced, ", ")))
	}
	for _, ch := range changed {
		c.printf("%s now runs something else, so it is a new program for consent: %s (was: %s); %d decision(s) dropped, it will be asked again\n",
			app.SafeText(ch.name), ch.after, ch.before, ch.dropped)
	}
	if len(added)+len(changed) > 0 {
		c.printf("new servers, and servers that now run something else, see no folder until you grant one\n")
	}
	if kept := len(replaced) - len(changed); kept > 0 {
		c.printf("%d replaced server(s) run the same program and keep their decisions\n", kept)
	}
	return nil
}

// printMoved says which folders were taken off a server's command line, and
// which arguments that name folders stay there by --keep-arg.
func (c *command) printMoved(srv app.Server, moved []app.MovedFolder) {
	for _, m := range moved {
		where := "on its command line"
		if m.Env != "" {
			where = "in $" + m.Env
		}
		c.printf("%s was given %s %s: taken off, it is a request now; it sees the folder only once you allow it (`rootkeeper grant %s %s`)\n",
			srv.Name, m.Path, where, app.ShellQuote(srv.Name), app.ShellQuote(m.Path))
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
