package cli

import (
	"fmt"
	"runtime"

	"rootkeeper/app/autostart"
	"rootkeeper/app/doctor"
	"rootkeeper/app/hosts"
	"rootkeeper/app/secrets"
	"rootkeeper/app/trayhost"
)

// doctorProbes are the real system's probes for doctor; tests replace
// them.
var doctorProbes = func() doctor.Options {
	o := doctor.Options{
		TrayHost:       trayhost.Present,
		Landlock:       landlockABI,
		LandlockKernel: LandlockKernel,
		Keyring:        func() error { return secrets.Available(secrets.OS) },
		Isolation:      NetworkIsolation,
		LookPath:       doctor.SystemLookPath,
		Autostart: func() (bool, string, error) {
			e, err := autostart.Default()
			if err != nil {
				return false, "", err
			}
			st, err := e.Status()
			return st.Enabled, st.Where, err
		},
	}
	if runtime.GOOS == "linux" {
		o.ProcSys = "/proc/sys"
	}
	return o
}

// doctor is `doctor [--json]`: each check, and what to do about each
// problem. Exit 0 when all is well, 1 otherwise.
func (c *command) doctor(args []string) error {
	f := newFlags("doctor")
	asJSON := f.Bool("json")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("doctor", pos); err != nil {
		return err
	}
	st, err := c.store.Load()
	if err != nil {
		return err
	}
	o := doctorProbes()
	o.State = st
	if o.Extra == nil {
		o.Extra = func() []doctor.Check {
			ho, err := c.hostsOptions(nil)
			if err != nil {
				return doctor.Hosts(nil, err)
			}
			return doctor.Hosts(hosts.List(ho))
		}
	}
	checks := doctor.Run(o)
	if *asJSON {
		if err := c.printJSON(checks); err != nil {
			return err
		}
	} else {
		for _, ch := range checks {
			mark := "ok  "
			if !ch.OK {
				mark = "FAIL"
			}
			c.printf("%s  %-16s %s\n", mark, ch.Name, ch.Detail)
			if ch.Fix != "" {
				c.printf("      what to do: %s\n", ch.Fix)
			}
		}
	}
	if n := doctor.Problems(checks); n > 0 {
		return fmt.Errorf("doctor found %d problem(s)", n)
	}
	return nil
}
