package audit

import (
	"rootkeeper/app"
)

// forward sends a line of the trail (a decision, a request, a refusal,
// what a server was told) also where the organisation's policy says
// (auditTo: the journal, syslog, the Windows event log), for the fleet's
// log collection. Noise is not sent. A sink that cannot be reached is
// skipped: the trail in the state folder stays the record.
func forward(e Entry) {
	for _, to := range app.Policy().AuditTo {
		switch to {
		case "journal":
			toJournal(e)
		case "syslog":
			toSyslog(e)
		case "eventlog":
			toEventLog(e)
		}
	}
}
