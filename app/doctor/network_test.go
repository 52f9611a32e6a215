package doctor

import (
	"strings"
	"testing"

	"rootkeeper/app"
)

// Without a network of their own for confined servers, the servers set to
// ask or only are named: there they are bounded for TCP connects only.
func TestNetworkCheck(t *testing.T) {
	st := app.State{Servers: []app.Server{
		{Name: "asker", Type: app.TransportStdio, Command: "x", Confine: true, Network: &app.NetworkSetting{Mode: app.NetworkAsk}},
		{Name: "off", Type: app.TransportStdio, Command: "x", Confine: true, Network: &app.NetworkSetting{Mode: app.NetworkOff}},
	}}
	if c := network(st, func() (bool, string) { return true, "" }); !c.OK {
		t.Errorf("with isolation: %+v", c)
	}
	c := network(st, func() (bool, string) { return false, "user namespaces are off" })
	if c.OK || !strings.Contains(c.Detail, "asker") || strings.Contains(c.Detail, "off,") || !strings.Contains(c.Detail, "user namespaces are off") || c.Fix == "" {
		t.Errorf("without isolation: %+v", c)
	}
	st.Servers = st.Servers[1:]
	if c := network(st, func() (bool, string) { return false, "no" }); !c.OK {
		t.Errorf("without isolation, no server asks: %+v", c)
	}
}
