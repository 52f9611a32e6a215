package cli

import (
	"rootkeeper/app/autostart"
)

// autostart is `autostart on|off|status [--json]`: whether Rootkeeper starts
// at login, into the tray with its window closed (package autostart keeps
// the entry: XDG autostart file, LaunchAgent, or Run key).
func (c *command) autostart(args []string) error {
	if len(args) == 0 {
		return usagef("%q needs on, off or status", "autostart")
	}
	sub, rest := args[0], args[1:]
	f := newFlags("autostart " + sub)
	asJSON := f.Bool("json")
	pos, _, err := f.parse(rest)
	if err != nil {
		return err
	}
	if err := exactly("autostart "+sub, pos); err != nil {
		return err
	}
	entry, err := autostart.Default()
	if err != nil {
		return err
	}
	switch sub {
	case "on", "off":
		if err := entry.Set(sub == "on"); err != nil {
			return err
		}
	case "status":
	default:
		return usagef("unknown verb %q for %q (on, off or status)", sub, "autostart")
	}
	st, err := entry.Status()
	if err != nil {
		return err
	}
	if *asJSON {
		return c.printJSON(st)
	}
	if st.Enabled {
		c.printf("starts at login, in the tray (%s)\n", st.Where)
	} else {
		c.printf("does not start at login (%s)\n", st.Where)
	}
	return nil
}
