//go:build windows

package audit

import (
	"sync"

	"golang.org/x/sys/windows/svc/eventlog"
)

func toJournal(Entry) {}

func toSyslog(Entry) {}

var eventLog = sync.OnceValue(func() *eventlog.Log {
	l, err := eventlog.Open("Rootkeeper")
	if err != nil {
		return nil
	}
	return l
})

// toEventLog writes e to the Windows event log (Application, source
// Rootkeeper; an installer registers the source so that the viewer shows
// the text plainly).
func toEventLog(e Entry) {
	if l := eventLog(); l != nil {
		l.Info(1, FormatText(e))
	}
}
