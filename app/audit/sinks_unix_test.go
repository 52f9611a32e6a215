//go:build unix

package audit

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/policy"
)

// TestForwardedWhereThePolicySays: with auditTo journal and syslog, a line
// of the trail (a request raised) is also sent to the journal's socket, in
// its native protocol, and to syslog; noise is not.
func TestForwardedWhereThePolicySays(t *testing.T) {
	dir := t.TempDir()
	listen := func(name string) *net.UnixConn {
		c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, name), Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	journal, sys := listen("journal"), listen("syslog")
	oldJ, oldS := journalSocket, syslogAddr
	journalSocket, syslogAddr = filepath.Join(dir, "journal"), filepath.Join(dir, "syslog")
	t.Cleanup(func() { journalSocket, syslogAddr = oldJ, oldS })
	old := app.Policy()
	app.SetPolicy(policy.Policy{Source: "test", AuditTo: []string{"journal", "syslog"}})
	t.Cleanup(func() { app.SetPolicy(old) })

	l := NewLog(t.TempDir())
	defer l.Close()
	l.Append(Entry{Server: "nosy", Via: ViaReach, Tried: "/home/me/secret/a.txt", Op: "read", Decided: ReachUnasked, Request: true})
	read := func(c *net.UnixConn) string {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 4096)
		n, err := c.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		return string(b[:n])
	}
	if got := read(journal); !strings.Contains(got, "SYSLOG_IDENTIFIER=rootkeeper\n") || !strings.Contains(got, "ROOTKEEPER_SERVER=nosy\n") ||
		!strings.Contains(got, "MESSAGE=") || !strings.Contains(got, "/home/me/secret/a.txt") {
		t.Errorf("journal got %q", got)
	}
	if got := read(sys); !strings.Contains(got, "rootkeeper") || !strings.Contains(got, "/home/me/secret/a.txt") {
		t.Errorf("syslog got %q", got)
	}
	// Noise (not asked, again) is not forwarded. Append sends before it
	// returns, so what it sent is queued already: nothing to wait for.
	l.Append(Entry{Server: "nosy", Via: ViaReach, Tried: "/x/missing", Op: "read", Decided: ReachIgnored})
	journal.SetReadDeadline(time.Now())
	if n, err := journal.Read(make([]byte, 4096)); err == nil {
		t.Errorf("noise was forwarded (%d bytes)", n)
	}
}
