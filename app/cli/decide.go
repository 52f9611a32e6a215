package cli

import (
	"rootkeeper/app"
)

// decide records an explicit decision typed by the person: `grant` is
// consent, `deny` is a remembered refusal.
func (c *command) decide(verb string, args []string, verdict app.Verdict) error {
	f := newFlags(verb)
	untilQuit := f.Bool("until-quit")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly(verb, pos, "SERVER", "ROOT"); err != nil {
		return err
	}
	scope := app.Always
	if *untilQuit {
		scope = app.UntilQuit
	}
	var root app.Root
	_, err = c.update(func(s *app.State) error {
		if _, ok := s.Server(pos[0]); !ok {
			return &app.InputError{Msg: "no server \"" + pos[0] + "\""}
		}
		r, err := findRoot(s, pos[1], c.env.Cwd)
		if err != nil {
			return err
		}
		root = r
		return s.Decide(app.Decision{Server: pos[0], Root: r.Path, Verdict: verdict, Scope: scope, By: app.ByCommandLine})
	})
	if err != nil {
		return err
	}
	if verdict == app.Allow {
		c.printf("%s may now see %s", pos[0], root.Path)
		if !root.Enabled {
			c.printf(" (once the root is enabled: `rootkeeper roots enable %s`)", root.Name)
		}
		c.printf("\n")
	} else {
		c.printf("%s may not see %s\n", pos[0], root.Path)
	}
	return nil
}

func (c *command) revoke(args []string) error {
	f := newFlags("revoke")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("revoke", pos, "SERVER", "ROOT"); err != nil {
		return err
	}
	var had bool
	var root app.Root
	_, err = c.update(func(s *app.State) error {
		if _, ok := s.Server(pos[0]); !ok {
			return &app.InputError{Msg: "no server \"" + pos[0] + "\""}
		}
		r, err := findRoot(s, pos[1], c.env.Cwd)
		if err != nil {
			return err
		}
		root = r
		had = s.Revoke(pos[0], r.Path)
		return nil
	})
	if err != nil {
		return err
	}
	if had {
		c.printf("revoked: %s no longer sees %s\n", pos[0], root.Path)
	} else {
		c.printf("%s had no decision for %s; nothing to revoke\n", pos[0], root.Path)
	}
	return nil
}

func (c *command) setPaused(paused bool) error {
	if _, err := c.update(func(s *app.State) error { s.Paused = paused; return nil }); err != nil {
		return err
	}
	if paused {
		c.printf("sharing paused: no server sees any root until `rootkeeper resume`\n")
	} else {
		c.printf("sharing resumed\n")
	}
	return nil
}
