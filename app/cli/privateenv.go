package cli

import (
	"slices"
	"strings"

	"rootkeeper/app"
)

// privateEnv is `private-env add|remove VAR... | list [--json]`: the
// variables of the app's environment that no server gets (app.ServerEnv).
// The sampling provider's key variable and the known provider keys are
// withheld without being listed here.
func (c *command) privateEnv(args []string) error {
	if len(args) == 0 {
		return usagef("%q needs add, remove or list", "private-env")
	}
	sub, rest := args[0], args[1:]
	f := newFlags("private-env " + sub)
	asJSON := f.Bool("json")
	pos, _, err := f.parse(rest)
	if err != nil {
		return err
	}
	switch sub {
	case "add", "remove":
		if len(pos) == 0 {
			return usagef("%q needs VAR", "private-env "+sub)
		}
		st, err := c.update(func(s *app.State) error {
			for _, name := range pos {
				if err := s.SetPrivateEnv(name, sub == "add"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		c.printf("private (no server gets them from the app's environment): %s\n", orNone(st.PrivateEnv))
		return nil
	case "list":
		if err := exactly("private-env list", pos); err != nil {
			return err
		}
		st, err := c.store.Load()
		if err != nil {
			return err
		}
		withheld := withheldFrom(&st)
		if *asJSON {
			return c.printJSON(map[string][]string{"private": nonNil(st.PrivateEnv), "withheld": withheld})
		}
		c.printf("marked private: %s\nwithheld from every server: %s\n", orNone(st.PrivateEnv), strings.Join(withheld, ", "))
		return nil
	}
	return usagef("unknown verb %q for %q", sub, "private-env")
}

// withheldFrom lists, sorted, every variable no server gets from the app's
// environment under st.
func withheldFrom(st *app.State) []string {
	out := append([]string{}, app.ProviderKeyVariables...)
	if st.Sampling != nil && st.Sampling.APIKeyEnv != "" {
		out = append(out, st.Sampling.APIKeyEnv)
	}
	out = append(out, st.PrivateEnv...)
	slices.Sort(out)
	return slices.Compact(out)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}
