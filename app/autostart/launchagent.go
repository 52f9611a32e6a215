package autostart

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
)

// LaunchAgentLabel names Rootkeeper's LaunchAgent; it is the app ID of
// FyneApp.toml, as launchd labels are reverse-DNS names.
const LaunchAgentLabel = "io.rootkeeper.app"

// launchAgentBackend is the per-user LaunchAgent that launchd loads at
// login; RunAtLoad starts the program then.
func launchAgentBackend() (backend, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	return &fileBackend{
		path:   filepath.Join(home, "Library", "LaunchAgents", LaunchAgentLabel+".plist"),
		render: launchAgentPlist,
	}, nil
}

// launchAgentPlist is the property list of e's LaunchAgent.
func launchAgentPlist(e *Entry) []byte {
	esc := func(s string) string {
		var b strings.Builder
		xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	var b strings.Builder
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString("<plist version=\"1.0\">\n<dict>\n")
	b.WriteString("\t<key>Label</key>\n\t<string>" + esc(LaunchAgentLabel) + "</string>\n")
	b.WriteString("\t<key>ProgramArguments</key>\n\t<array>\n")
	for _, a := range append([]string{e.Exe}, e.Args...) {
		b.WriteString("\t\t<string>" + esc(a) + "</string>\n")
	}
	b.WriteString("\t</array>\n")
	b.WriteString("\t<key>RunAtLoad</key>\n\t<true/>\n")
	// Interactive: a tray app the person uses, not a background daemon
	// launchd may throttle.
	b.WriteString("\t<key>ProcessType</key>\n\t<string>Interactive</string>\n")
	b.WriteString("</dict>\n</plist>\n")
	return []byte(b.String())
}
