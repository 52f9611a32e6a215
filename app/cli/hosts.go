package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"rootkeeper/app"
	"rootkeeper/app/hosts"
	"rootkeeper/app/words"
)

// HostsWorld and HostsExecutable are where `hosts` finds the hosts' files
// and what the rewritten entries run. Tests replace them; by default they
// are this process's environment and its own executable (symlinks
// resolved, so an upgrade through a package manager's link keeps working
// only if the link does: the resolved path is what hosts run).
var (
	HostsWorld      = hosts.ThisWorld
	HostsProbe      = hosts.ProbeOAuth
	HostsExecutable = func() (string, error) {
		exe, err := os.Executable()
		if err != nil {
			return "", err
		}
		return filepath.EvalSymlinks(exe)
	}
)

// hostsVerb is `hosts list|protect|restore`.
func (c *command) hostsVerb(args []string) error {
	if len(args) == 0 {
		return usagef("%q needs list, protect or restore", "hosts")
	}
	switch args[0] {
	case "list":
		return c.hostsList(args[1:])
	case "protect":
		return c.hostsChange("protect", args[1:])
	case "restore":
		return c.hostsChange("restore", args[1:])
	}
	return usagef("unknown hosts command %q (want list, protect or restore)", args[0])
}

// hostsOptions are the options of a hosts command: the projects given
// with --project, then every project Rootkeeper knows (its roots), whose
// project files (.mcp.json, .vscode/mcp.json…) are listed and protected
// with the hosts'.
func (c *command) hostsOptions(projects []string) (hosts.Options, error) {
	o := hosts.Options{World: HostsWorld(), Store: c.store}
	for _, p := range projects {
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.env.Cwd, p)
		}
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			return o, usagef("--project %q is not a folder", p)
		}
		o.Projects = append(o.Projects, filepath.Clean(p))
	}
	return o.WithKnownProjects()
}

func (c *command) hostsList(args []string) error {
	f := newFlags("hosts list")
	asJSON := f.Bool("json")
	known := f.Bool("known")
	projects := f.List("project")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("hosts list", pos); err != nil {
		return err
	}
	if *known {
		return c.hostsKnown(*asJSON)
	}
	o, err := c.hostsOptions(*projects)
	if err != nil {
		return err
	}
	found, err := hosts.List(o)
	if err != nil {
		return err
	}
	if *asJSON {
		if found == nil {
			found = []hosts.Found{}
		}
		return c.printJSON(found)
	}
	if len(found) == 0 {
		c.printf("no MCP host config found\n")
		return nil
	}
	// The hosts' own files first, then each project's files together.
	byProject := map[string][]hosts.File{}
	for _, h := range found {
		var own []hosts.File
		servers, protected := 0, 0
		for _, f := range h.Files {
			if f.ProjectDir != "" {
				byProject[f.ProjectDir] = append(byProject[f.ProjectDir], f)
				continue
			}
			own = append(own, f)
			servers += len(f.Entries)
			protected += f.Protected
		}
		if len(own) == 0 {
			continue
		}
		c.printf("%s (%s): %d server(s), %d protected\n", h.ID, h.Name, servers, protected)
		for _, f := range own {
			c.printHostFile(f, "")
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(byProject)) {
		c.printf("project %s\n", dir)
		for _, f := range byProject[dir] {
			name := f.Host
			if h, ok := hosts.Lookup(f.Host); ok {
				name = h.Name
			}
			c.printHostFile(f, name+": ")
		}
	}
	return nil
}

func (c *command) printHostFile(f hosts.File, prefix string) {
	note := ""
	switch {
	case f.Err != "":
		note = " — " + f.Err
	case f.Managed:
		note = " — your organisation's (managed): protect leaves it be"
		if len(f.Entries) > 0 {
			note += "; the host loads only these servers"
		}
	case f.ChangedSinceProtect:
		note = " — changed since Rootkeeper protected it"
	}
	c.printf("  %s%s%s\n", prefix, f.Path, note)
	for _, r := range f.Rules {
		c.printf("    %s (the host's own list, managed)\n", words.SafeText(r))
	}
	for _, e := range f.Entries {
		state := "not protected"
		switch {
		case f.Managed:
			state = "managed by your organisation"
		case e.Protected:
			state = "protected as " + e.Rootkeeper
		case e.Skip != "":
			state = "cannot protect: " + e.Skip
		}
		c.printf("    %-24s %-12s %s\n", e.Name, e.Scope, state)
	}
}

// hostsKnown is `hosts list --known`: every host Rootkeeper knows and the
// files it looks at on this OS, found or not.
func (c *command) hostsKnown(asJSON bool) error {
	known := hosts.KnownHosts(HostsWorld())
	if asJSON {
		return c.printJSON(known)
	}
	for _, k := range known {
		c.printf("%s (%s, %s)\n", k.ID, k.Name, k.Format)
		for _, f := range k.Files {
			switch {
			case len(f.Found) == 0:
				c.printf("  %s (not found)\n", f.Path)
			case len(f.Found) == 1 && f.Found[0] == f.Path:
				c.printf("  %s (found)\n", f.Path)
			default:
				c.printf("  %s (found: %s)\n", f.Path, strings.Join(f.Found, ", "))
			}
		}
		if len(k.ProjectFiles) > 0 {
			c.printf("  in each project: %s\n", strings.Join(k.ProjectFiles, ", "))
		}
	}
	return nil
}

func (c *command) hostsChange(verb string, args []string) error {
	f := newFlags("hosts " + verb)
	all := f.Bool("all")
	dry := f.Bool("dry-run")
	keep := new(bool)
	if verb == "protect" {
		keep = f.Bool("keep")
	}
	projects := f.List("project")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	var targets []*hosts.Host
	switch {
	case *all && len(pos) > 0:
		return usagef("give a HOST or --all, not both (got %q)", pos[0])
	case *all:
		targets = hosts.Hosts
	default:
		if err := exactly("hosts "+verb, pos, "HOST|--all"); err != nil {
			return err
		}
		h, ok := hosts.Lookup(pos[0])
		if !ok {
			return usagef("unknown host %q (want one of %s)", pos[0], strings.Join(hosts.IDs(), ", "))
		}
		targets = []*hosts.Host{h}
	}
	o, err := c.hostsOptions(*projects)
	if err != nil {
		return err
	}
	o.DryRun = *dry
	o.Keep = *keep
	if verb == "protect" {
		if err := setBridge(&o, c.store); err != nil {
			return err
		}
	}
	would := ""
	if o.DryRun {
		would = "would be "
	}
	total := 0
	for _, h := range targets {
		var res []hosts.FileResult
		if verb == "protect" {
			res, err = hosts.Protect(h, o)
		} else {
			res, err = hosts.Restore(h, o)
		}
		if err != nil {
			return err
		}
		for _, r := range res {
			total++
			if verb == "protect" {
				c.printProtect(r, would)
			} else {
				c.printRestore(r, would)
			}
		}
	}
	if verb == "protect" && o.Keep && total > 0 && !o.DryRun {
		c.printf("kept: while Rootkeeper runs, a host writing its own entries back is protected again (backed up first), and you are told\n")
	}
	if total == 0 {
		if verb == "protect" {
			c.printf("no host config file found\n")
		} else {
			c.printf("nothing to restore: Rootkeeper has not protected these hosts\n")
		}
	}
	return nil
}

func (c *command) printProtect(r hosts.FileResult, would string) {
	c.printf("%s: %s\n", r.Host, r.Path)
	if r.Refused != "" {
		c.printf("  %s\n", r.Refused)
	}
	for _, ch := range r.Changes {
		c.printf("  %s %sbridged as %s: %s\n", ch.Entry.Name, would, ch.Entry.Rootkeeper, ch.Program)
		if would != "" {
			c.printf("    the entry would run: %s\n", strings.Join(quoteAll(ch.Bridge), " "))
		}
		for _, sl := range ch.Slots {
			c.printf("    configured with %s (%s): it starts once you allow it (grant %s %s)\n", sl.Path, sl.Where(), ch.Entry.Rootkeeper, words.ShellQuote(sl.Path))
		}
		if len(ch.HostEnv) > 0 {
			c.printf("    env %s stays in the host's file (the host expands it; the server gets it through the bridge)\n", strings.Join(ch.HostEnv, ", "))
		}
		if len(ch.StoredEnv) > 0 {
			c.printf("    env %s is withheld from servers' inherited environment, so Rootkeeper stores it as %s's own env\n", strings.Join(ch.StoredEnv, ", "), ch.Entry.Rootkeeper)
		}
		if len(ch.LostEnv) > 0 {
			c.printf("    warning: env %s is withheld from servers and its value is expanded by the host: the server will not get it through the bridge (give it a literal value, or `private-env remove` it)\n", strings.Join(ch.LostEnv, ", "))
		}
		if ch.NewProgram {
			c.printf("    %s now runs something else: a new program for consent; %d decision(s) dropped\n", ch.Entry.Rootkeeper, ch.Dropped)
		}
	}
	for _, e := range r.Skipped {
		c.printf("  %s left as it is: %s\n", e.Name, e.Skip)
	}
	if r.Already > 0 {
		c.printf("  %d server(s) already protected\n", r.Already)
	}
	if r.Written {
		c.printf("  backup: %s\n", r.Backup)
		c.printf("  %s\n", restartAdvice(r.Host))
	}
}

func (c *command) printRestore(r hosts.FileResult, would string) {
	switch {
	case r.Refused != "":
		c.printf("%s: %s\n  %s\n", r.Host, r.Path, r.Refused)
	case r.How == "byte for byte":
		c.printf("%s: %s %srestored byte for byte\n", r.Host, r.Path, would)
	case r.How == "entries":
		c.printf("%s: %s was edited since it was protected: %sput back only the entries Rootkeeper rewrote\n", r.Host, r.Path, would)
		for _, k := range r.Kept {
			c.printf("  %s no longer runs the bridge Rootkeeper wrote: left as it is\n", k)
		}
	default:
		c.printf("%s: %s: %s\n", r.Host, r.Path, r.How)
	}
	if r.Written {
		c.printf("  %s (its servers stay in Rootkeeper: servers remove NAME forgets one)\n", restartAdvice(r.Host))
	}
}

// setBridge fills in what protected entries run: this rootkeeper, with
// --state-dir when the state folder is not the default.
func setBridge(o *hosts.Options, store *app.Store) error {
	var err error
	o.Probe = HostsProbe
	if o.Executable, err = HostsExecutable(); err != nil {
		return fmt.Errorf("finding rootkeeper's own path: %w", err)
	}
	if def, err := app.DefaultStateDir(); err != nil || filepath.Clean(def) != store.Dir() {
		o.StateDirArg = store.Dir()
	}
	return nil
}

// WatchHosts watches the files Rootkeeper protected while the app runs
// (hosts.Watch), telling through notify (core.SetNotice) what hosts
// changed, and protecting again the files of hosts kept with --keep.
func WatchHosts(ctx context.Context, store *app.Store, notify func(topic, msg string), log func(string)) error {
	o := hosts.Options{World: HostsWorld(), Store: store}
	if err := setBridge(&o, store); err != nil {
		return err
	}
	return hosts.Watch(ctx, hosts.WatchOptions{Options: o, Notify: notify, Log: log})
}

// restartAdvice tells a person what a running host needs: a restart, by
// them (Rootkeeper never stops a host).
func restartAdvice(id string) string {
	h, ok := hosts.Lookup(id)
	if ok && h.Running() {
		return h.Name + " is running: restart it to pick up the change (until then it keeps its old servers, and may write its own copy of the file back; hosts list shows whether the change held)"
	}
	return "the next time it starts, " + id + " reads the change"
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, w := range args {
		out[i] = words.ShellQuote(w)
	}
	return out
}
