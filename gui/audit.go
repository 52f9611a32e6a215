package gui

import "rootkeeper/app/audit"

// auditEntry is one answer given to a server, as the audit log records it.
type auditEntry = audit.Entry

// readAudit reads the audit log of the state folder dir, for server (""
// means every server), oldest first. A variable so that tests may feed it.
var readAudit = audit.Read
