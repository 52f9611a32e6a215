package cli

import (
	"fmt"
	"strings"

	"rootkeeper/app"
)

// bridge is `bridge NAME`: the stdio endpoint a host starts instead of
// server NAME. An unknown NAME is refused (exit 2) before anything is read
// from stdin, so a host shows the error at once.
func (c *command) bridge(args []string) error {
	f := newFlags("bridge")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("bridge", pos, "NAME"); err != nil {
		return err
	}
	st, err := c.store.Load()
	if err != nil {
		return err
	}
	if _, ok := st.Server(pos[0]); !ok {
		names := make([]string, len(st.Servers))
		for i, s := range st.Servers {
			names[i] = s.Name
		}
		known := "none is configured"
		if len(names) > 0 {
			known = "configured: " + strings.Join(names, ", ")
		}
		return &app.InputError{Msg: fmt.Sprintf("bridge: no server %q (%s)", pos[0], known)}
	}
	if c.ext.Bridge == nil {
		return fmt.Errorf("this build cannot bridge")
	}
	return c.ext.Bridge(c.ctx, c.store, pos[0], c.env.Stdin, c.env.Stdout, c.env.Stderr)
}
