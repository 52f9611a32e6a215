package bridge

// The host's own folders: asked for, and recorded as requests, never
// shared by themselves.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// noteRequests remembers the requests of a line the server is about to
// get, so that a restart can tell the host which ones to send again.
func (b *bridge) noteRequests(line []byte) {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && t[0] == '[' {
		for _, m := range splitBatch(t) {
			b.noteRequests(m)
		}
		return
	}
	if id, ok := requestID(t); ok {
		b.mu.Lock()
		if len(b.inflight) < 10_000 {
			b.inflight[string(id)] = struct{}{}
		}
		b.mu.Unlock()
	}
}

// askHostRoots sends roots/list to the host; its answer comes back through
// hostRootsAnswer.
func (b *bridge) askHostRoots() {
	id := fmt.Sprintf("%s%d", ownIDPrefix, b.nextID.Add(1))
	b.mu.Lock()
	if len(b.ownPending) > 8 {
		b.mu.Unlock()
		return // a host that never answers does not collect questions
	}
	b.ownPending[id] = true
	b.mu.Unlock()
	b.host.writeJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": methodListRoots, "params": map[string]any{}})
}

func isOwnID(id json.RawMessage) bool {
	var s string
	return json.Unmarshal(id, &s) == nil && strings.HasPrefix(s, ownIDPrefix)
}

// hostRootsAnswer takes the host's folders from its roots/list answer: each
// becomes a request for the server (never shared by itself), and in
// host-roots mode follow they narrow what the session sees.
func (b *bridge) hostRootsAnswer(h header) {
	var id string
	json.Unmarshal(h.ID, &id)
	b.mu.Lock()
	delete(b.ownPending, id)
	host := b.session.Host
	if b.session.HostVersion != "" {
		host += " " + b.session.HostVersion
	}
	b.mu.Unlock()
	if len(h.Error) > 0 {
		return
	}
	var res struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if json.Unmarshal(h.Result, &res) != nil {
		return
	}
	var folders []string
	for _, r := range res.Roots {
		if len(folders) == maxHostRoots {
			break
		}
		if p, ok := hostFolder(r.URI); ok && !slices.Contains(folders, p) {
			folders = append(folders, p)
		}
	}
	slices.Sort(folders)
	b.mu.Lock()
	b.hostRoots = folders
	b.mu.Unlock()
	b.publish()
	if host == "" {
		host = "the host"
	}
	now := time.Now().UTC()
	if len(folders) > 0 && b.wouldRecord(folders, words.SafeText(host), now) {
		err := b.o.Core.Update(func(s *app.State) error {
			for _, f := range folders {
				if _, err := s.AddRequest(b.srv.Name, f, words.SafeText(host), now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.log.Warn("cannot record the host's folders as requests", "error", err)
		}
	}
	b.poke()
}

// wouldRecord reports whether recording folders as requests from host
// would change the state: a host that answers roots/list again and again
// does not get the state file written each time.
func (b *bridge) wouldRecord(folders []string, host string, now time.Time) bool {
	st := b.o.Core.Snapshot().State.Clone()
	for _, f := range folders {
		if changed, err := st.AddRequest(b.srv.Name, f, host, now); changed || err != nil {
			return true
		}
	}
	return false
}

// hostFolder turns a host's root URI into a canonical folder path, or
// reports that it is not one: only absolute file:// URIs of folders that
// exist count, with symlinks resolved and no "..".
func hostFolder(uri string) (string, bool) {
	if !strings.HasPrefix(uri, "file://") || strings.Contains(uri, "/../") || strings.HasSuffix(uri, "/..") {
		return "", false
	}
	p, err := app.PathFromURI(uri)
	if err != nil {
		return "", false
	}
	canon, _, err := app.CanonicalPath(p, "/")
	if err != nil {
		return "", false
	}
	return canon, true
}
