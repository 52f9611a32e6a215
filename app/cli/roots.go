package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/control"
	"rootkeeper/app/words"
)

func (c *command) roots(args []string) error {
	if len(args) == 0 {
		return usagef("%q needs add, list, check, remove, enable or disable", "roots")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "add":
		return c.rootsAdd(rest)
	case "list":
		return c.rootsList(rest)
	case "check":
		return c.rootsCheck(rest)
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
		fmt.Fprintf(c.env.Stderr, "rootkeeper: warning: %s\n", words.SafeText(w))
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
		tw.Write([]byte(words.SafeText(v.Name) + "\t" + enabled + "\t" + v.Health + "\t" + words.SafeText(shared) + "\t" + words.SafeText(v.Path) + "\n"))
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

// OpCheck is the control socket's op that checks a root's access again now
// (`roots check`, the window's "Check again"), with a CheckRequest; the
// answer is the root's app.Health once checked.
const OpCheck = "check"

// CheckRequest is OpCheck's argument.
type CheckRequest struct {
	// Root is the root's canonical path.
	Root string `json:"root"`
}

// appCheckTimeout bounds one check asked of the app: a check itself ends
// within the monitor's CheckTimeout (5 s; it is unreadable then), below
// the control socket's own 10 s deadline.
const appCheckTimeout = 8 * time.Second

// CheckHandler answers OpCheck with c (the running app's health monitor;
// main registers it).
func CheckHandler(c app.HealthChecker) control.Handler {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var req CheckRequest
		if err := json.Unmarshal(raw, &req); err != nil || req.Root == "" {
			return nil, fmt.Errorf("%s: bad request: want {\"root\": PATH}", OpCheck)
		}
		ctx, cancel := context.WithTimeout(ctx, appCheckTimeout)
		defer cancel()
		return c.Check(ctx, req.Root)
	}
}

// checkView is a root's health as `roots check --json` prints it.
type checkView struct {
	Path    string    `json:"path"`
	Health  string    `json:"health"`
	Error   string    `json:"error,omitempty"`
	MovedTo string    `json:"movedTo,omitempty"`
	Branch  string    `json:"branch,omitempty"`
	Checked time.Time `json:"checked"`
}

// rootsCheck is `roots check ROOT [--json]`: the running app checks the
// root again now (its health, and so who sees it, follows at once); with no
// app running, the same access check runs here. It prints the health and
// fails (exit 1) when the folder does not pass.
func (c *command) rootsCheck(args []string) error {
	f := newFlags("roots check")
	asJSON := f.Bool("json")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("roots check", pos, "ROOT"); err != nil {
		return err
	}
	st, err := c.store.Load()
	if err != nil {
		return err
	}
	r, err := findRoot(&st, pos[0], c.env.Cwd)
	if err != nil {
		return err
	}
	if !r.Enabled {
		return &app.InputError{Msg: fmt.Sprintf("%s is disabled, and only enabled folders are checked: roots enable %s", r.Path, r.Path)}
	}
	ctx, cancel := context.WithTimeout(c.ctx, appCheckTimeout+2*time.Second)
	defer cancel()
	var h app.Health
	err = control.Call(ctx, c.store.Dir(), OpCheck, CheckRequest{Root: r.Path}, &h)
	if errors.Is(err, control.ErrNotRunning) {
		h = app.CheckAccessWithin(r.Path, r.Device, checkTimeout)
	} else if err != nil {
		return err
	}
	if *asJSON {
		v := checkView{Path: r.Path, Health: string(h.Status), Error: h.Err, MovedTo: h.MovedTo, Branch: h.Branch, Checked: h.Checked}
		if err := c.printJSON(v); err != nil {
			return err
		}
	} else if h.OK() {
		c.printf("%s: ok\n", words.SafeText(r.Path))
	}
	if !h.OK() {
		why := string(h.Status)
		if h.MovedTo != "" {
			why += " to " + h.MovedTo
		}
		if h.Err != "" {
			why += ": " + h.Err
		}
		return fmt.Errorf("%s does not pass its access check (%s); no server sees it until it does", r.Path, why)
	}
	return nil
}
