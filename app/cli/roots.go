package cli

import (
	"fmt"
	"text/tabwriter"

	"rootkeeper/app"
)

func (c *command) roots(args []string) error {
	if len(args) == 0 {
		return usagef("%q needs add, list, remove, enable or disable", "roots")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "add":
		return c.rootsAdd(rest)
	case "list":
		return c.rootsList(rest)
	case "remove", "enable", "disable":
		f := newFlags("roots " + sub)
		pos, _, err := f.parse(rest)
		if err != nil {
			return err
		}
		if err := exactly("roots "+sub, pos, "ROOT"); err != nil {
			return err
		}
		var name string
		_, err = c.update(func(s *app.State) error {
			r, err := findRoot(s, pos[0], c.env.Cwd)
			if err != nil {
				return err
			}
			name = r.Path
			switch sub {
			case "remove":
				return s.RemoveRoot(r.Path)
			default:
				return s.SetEnabled(r.Path, sub == "enable")
			}
		})
		if err != nil {
			return err
		}
		c.printf("%sd %s\n", sub, name)
		return nil
	}
	return usagef("unknown verb %q for %q", sub, "roots")
}

func findRoot(s *app.State, ref, cwd string) (app.Root, error) {
	r, err := s.FindRoot(ref, cwd)
	if err != nil {
		return app.Root{}, &app.InputError{Msg: err.Error()}
	}
	return r, nil
}

func (c *command) rootsAdd(args []string) error {
	f := newFlags("roots add")
	name := f.String("name")
	enable := f.Bool("enable")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("roots add", pos, "PATH"); err != nil {
		return err
	}
	root, err := app.NewRoot(pos[0], c.env.Cwd, app.SourcePicked)
	if err != nil {
		return err
	}
	if *name != "" {
		root.Name = *name
	}
	root.Enabled = *enable
	if _, err := c.update(func(s *app.State) error { return s.AddRoot(root) }); err != nil {
		return err
	}
	// The same warnings the share dialog shows, before anyone is granted it.
	for _, w := range app.RiskWarnings(root, c.env.Home) {
		fmt.Fprintf(c.env.Stderr, "rootkeeper: warning: %s\n", app.SafeText(w))
	}
	state := "disabled"
	if root.Enabled {
		state = "enabled"
	}
	c.printf("added %s as %q (%s; no server sees it until you grant it)\n", root.Path, root.Name, state)
	return nil
}

// rootView is a root as `roots list --json` prints it.
type rootView struct {
	Name       string   `json:"name"`
	Path       string   `json:"path"`
	Given      string   `json:"given,omitempty"`
	URI        string   `json:"uri"`
	Source     string   `json:"source"`
	Enabled    bool     `json:"enabled"`
	Health     string   `json:"health"`
	Error      string   `json:"error,omitempty"`
	Branch     string   `json:"branch,omitempty"`
	Remote     string   `json:"remote,omitempty"`
	SharedWith []string `json:"sharedWith"`
}

func (c *command) rootsList(args []string) error {
	f := newFlags("roots list")
	asJSON := f.Bool("json")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("roots list", pos); err != nil {
		return err
	}
	snap, err := c.snapshot()
	if err != nil {
		return err
	}
	views := make([]rootView, 0, len(snap.State.Roots))
	for _, r := range snap.State.Roots {
		h := snap.Health[r.Path]
		branch := r.Branch
		if h.Branch != "" {
			branch = h.Branch
		}
		views = append(views, rootView{
			Name: r.Name, Path: r.Path, Given: r.Given, URI: r.URI(), Source: string(r.Source),
			Enabled: r.Enabled, Health: string(h.Status), Error: h.Err, Branch: branch, Remote: r.Remote,
			SharedWith: nonNil(app.SharedWith(snap, r.Path)),
		})
	}
	if *asJSON {
		return c.printJSON(views)
	}
	if len(views) == 0 {
		c.printf("no roots yet: add one with `rootkeeper roots add PATH`\n")
		return nil
	}
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	tw.Write([]byte("NAME\tENABLED\tHEALTH\tSHARED WITH\tPATH\n"))
	for _, v := range views {
		shared := "-"
		if len(v.SharedWith) > 0 {
			shared = join(v.SharedWith)
		}
		enabled := "no"
		if v.Enabled {
			enabled = "yes"
		}
		tw.Write([]byte(app.SafeText(v.Name) + "\t" + enabled + "\t" + v.Health + "\t" + app.SafeText(shared) + "\t" + app.SafeText(v.Path) + "\n"))
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}
