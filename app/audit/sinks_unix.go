//go:build unix

package audit

import (
	"log/syslog"
	"net"
	"strings"
	"sync"
)

// journalSocket is systemd-journald's native socket (a test points it at a
// listener of its own).
var journalSocket = "/run/systemd/journal/socket"

// toJournal sends e to the journal in its native protocol: one datagram
// of KEY=value lines (FormatText is one line already).
func toJournal(e Entry) {
	c, err := net.Dial("unixgram", journalSocket)
	if err != nil {
		return
	}
	defer c.Close()
	var b strings.Builder
	field := func(k, v string) {
		b.WriteString(k + "=" + strings.ReplaceAll(v, "\n", " ") + "\n")
	}
	field("MESSAGE", FormatText(e))
	field("SYSLOG_IDENTIFIER", "rootkeeper")
	field("PRIORITY", "5") // notice
	field("ROOTKEEPER_SERVER", e.Server)
	field("ROOTKEEPER_VIA", e.Via)
	if e.Decided != "" {
		field("ROOTKEEPER_DECIDED", e.Decided)
	}
	c.Write([]byte(b.String()))
}

// syslogAddr is where syslog listens ("" the system's own: /dev/log); a
// test points it at a listener of its own.
var syslogAddr = ""

var syslogWriter = sync.OnceValue(func() *syslog.Writer {
	var w *syslog.Writer
	var err error
	if syslogAddr == "" {
		w, err = syslog.New(syslog.LOG_NOTICE|syslog.LOG_AUTH, "rootkeeper")
	} else {
		w, err = syslog.Dial("unixgram", syslogAddr, syslog.LOG_NOTICE|syslog.LOG_AUTH, "rootkeeper")
	}
	if err != nil {
		return nil
	}
	return w
})

func toSyslog(e Entry) {
	if w := syslogWriter(); w != nil {
		w.Notice(FormatText(e))
	}
}

// toEventLog: the Windows event log is Windows'.
func toEventLog(Entry) {}
