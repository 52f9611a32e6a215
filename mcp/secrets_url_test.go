package mcp

import (
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// A remote server that cannot be reached: the error status shows (and
// `status` prints) names its URL, Go's own text included, with the secrets
// of its query hidden.
func TestStatusErrorHidesTheURLsSecret(t *testing.T) {
	const key = "sk-live-Zz9Yy8Xx7Ww6Vv5Uu4"
	e := newEnv(t)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "web", Type: app.TransportHTTP, URL: "http://127.0.0.1:1/mcp?api_key=" + key + "&region=eu"})
	})
	e.start(e.fastOptions())
	var st app.ServerStatus
	apptest.Eventually(t, "an error status", func() (bool, string) {
		st = e.status("web")
		return st.Error != "", string(st.State)
	})
	if strings.Contains(st.Error, key) || !strings.Contains(st.Error, "127.0.0.1:1") {
		t.Errorf("status error %q", st.Error)
	}
}
