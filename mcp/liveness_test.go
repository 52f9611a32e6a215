package mcp

import (
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// A stdio server that stops answering (it stops reading its stdin once
// initialized) is pinged, marked unresponsive and started again, while an
// honest server beside it stays connected.
func TestUnresponsiveServerIsRestarted(t *testing.T) {
	bin := rootServer(t)
	r := listenReports(t)
	e := newEnv(t)
	e.addRootServer(bin, r, "hung", "", "-hang")
	e.addRootServer(bin, r, "fine", "")
	opts := e.fastOptions()
	opts.KeepAlive = 150 * time.Millisecond
	e.start(opts)
	r.next(t, "hung", "start")
	e.waitConnected("fine")
	var sawUnresponsive bool
	apptest.Eventually(t, "the hung server marked unresponsive", func() (bool, string) {
		st := e.status("hung")
		if strings.Contains(st.Error, "unresponsive") {
			sawUnresponsive = true
		}
		return sawUnresponsive, string(st.State) + " " + st.Error
	})
	r.next(t, "hung", "start") // started again
	if st := e.status("fine"); st.State != app.ServerConnected || st.Restarts != 0 {
		t.Errorf("the honest server was disturbed: %+v", st)
	}
}
