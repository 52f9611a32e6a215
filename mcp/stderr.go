package mcp

import (
	"io"

	"rootkeeper/app"
	"rootkeeper/app/logfile"
)

// A server's stderr goes to a ring the Log dialog reads and to
// StateDir/logs/NAME.log, rotated while it is written.

// openLog opens the server's log file, if there is a state folder.
func (a *adapter) openLog() {
	p := a.m.logPath(a.cfg.Name)
	if p == "" {
		return
	}
	f, err := logfile.Open(p, a.m.opts.LogMaxSize, a.m.opts.LogKeep)
	if err != nil {
		a.m.log.Warn("cannot open the server log", "error", err)
		return
	}
	// The log never fails the server's stderr; its problems show on the
	// server's card and in status instead.
	f.OnProblem = func(err error) {
		text := ""
		if err != nil {
			text = err.Error()
		}
		a.update(func(s *app.ServerStatus) { s.LogProblem = text })
	}
	a.logf = f
}

// closeLog closes it.
func (a *adapter) closeLog() {
	if a.logf != nil {
		a.logf.Close()
	}
}

// stderrWriter is where the server's stderr goes.
func (a *adapter) stderrWriter() io.Writer {
	if a.logf == nil {
		return a.stderr
	}
	return io.MultiWriter(a.stderr, a.logf)
}
