package bridge

import (
	"os"
	"strings"

	"rootkeeper/mcp"
)

// confineFailed is told that the server ended by itself: a confined run
// that reached past its folders is recorded (the card and `status` show
// it, with the way out) and the host's stderr says so, since a host shows
// that to the person when a server fails.
func (b *bridge) confineFailed(p *serverProc) {
	if p == nil || p.witness == nil {
		return
	}
	f, ok := p.witness.Diagnose(b.srv.Name)
	if !ok {
		return
	}
	if err := mcp.RecordConfineFailure(b.o.Core, f); err != nil {
		b.log.Error("cannot record the failure", "error", err)
	}
	// The folder first (it is the server's alone once allowed), then
	// running it unconfined.
	line := "rootkeeper bridge: " + f.Text(homeDir()) + " (" + strings.Join(f.WayOut(), ", or ") + ")"
	b.o.Stderr.Write([]byte(line + "\n"))
}

// ranConfined is told that the server answered initialize: a confined run
// that got so far forgets an earlier failure (off the relay's path, since
// that may write the state).
func (b *bridge) ranConfined(p *serverProc) {
	if p == nil || p.witness == nil {
		return
	}
	go func() {
		if err := mcp.ClearConfineFailure(b.o.Core, b.srv.Name); err != nil {
			b.log.Error("cannot record that the server runs confined", "error", err)
		}
	}()
}

// homeDir is the person's home folder, for shortening paths.
func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}
