package gui

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// auditEntry is one line of the audit log: which server got which roots
// when. It has the fields of app/audit's Entry.
type auditEntry struct {
	Time            time.Time `json:"time"`
	Server          string    `json:"server"`
	ProtocolVersion string    `json:"protocolVersion,omitempty"`
	Roots           []string  `json:"roots"`
	Error           string    `json:"error,omitempty"`
	Via             string    `json:"via,omitempty"`
}

// readAudit reads the audit log of the state folder dir, for server (""
// means every server), oldest first. A missing log is an empty one.
//
// It reads STATE_DIR/audit.jsonl itself until package app/audit exists;
// swap it for audit.Read then.
var readAudit = func(dir, server string) ([]auditEntry, error) {
	f, err := os.Open(filepath.Join(dir, "audit.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []auditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e auditEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a torn last line while the log is being written
		}
		if server == "" || e.Server == server {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}
