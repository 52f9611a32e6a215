package gui

import "rootkeeper/app/audit"

// auditEntry is one answer given to a server, as the audit log records it.
type auditEntry = audit.Entry

// readAudit returns the entries of the audit log f follows, oldest first
// (shared with f: not to be changed). A variable so that tests may count
// its reads.
var readAudit = func(f *audit.Follower) ([]auditEntry, error) {
	entries, _, err := f.Entries()
	return entries, err
}
