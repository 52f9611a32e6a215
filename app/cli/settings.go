package cli

import (
	"strconv"
	"time"

	"rootkeeper/app"
)

// settings is `settings [--json]` (what is set) and `settings reach-wait
// DURATION` (how long a confined server's call past its folders waits
// while you are asked: app.State.ReachWait).
func (c *command) settings(args []string) error {
	f := newFlags("settings")
	asJSON := f.Bool("json")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		st, err := c.store.Load()
		if err != nil {
			return err
		}
		wait := st.ReachWait()
		if *asJSON {
			return c.printJSON(map[string]int{"reachWait": int(wait / time.Second)})
		}
		c.printf("reach-wait %s   how long a confined server's call past its folders waits while you are asked\n", wait)
		return nil
	case pos[0] == "reach-wait" && len(pos) == 2:
		wait, err := parseWait(pos[1])
		if err != nil {
			return err
		}
		if _, err := c.update(func(s *app.State) error {
			if s.Settings == nil {
				s.Settings = &app.Settings{}
			}
			s.Settings.ReachWait = int(wait / time.Second)
			return nil
		}); err != nil {
			return err
		}
		c.printf("a confined server's call past its folders now waits %s while you are asked (refused at once when nobody can be)\n", wait)
		return nil
	case pos[0] == "reach-wait":
		return usagef("%q needs one DURATION, such as 10s", "settings reach-wait")
	}
	return usagef("unknown setting %q (known: reach-wait)", pos[0])
}

// parseWait reads a reach wait: a duration (20s, 1m) or whole seconds,
// within app.MinReachWait and app.MaxReachWait.
func parseWait(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		n, nerr := strconv.Atoi(s)
		if nerr != nil {
			return 0, usagef("invalid reach-wait %q (want a duration such as 10s)", s)
		}
		d = time.Duration(n) * time.Second
	}
	if d < app.MinReachWait || d > app.MaxReachWait || d%time.Second != 0 {
		return 0, usagef("invalid reach-wait %q (want whole seconds from %s to %s)", s, app.MinReachWait, app.MaxReachWait)
	}
	return d, nil
}
