//go:build !unix && !windows

package audit

func toJournal(Entry)  {}
func toSyslog(Entry)   {}
func toEventLog(Entry) {}
