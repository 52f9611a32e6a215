package autostart

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// DesktopFileName is the XDG autostart entry's file name.
const DesktopFileName = "rootkeeper.desktop"

// IconName is the icon the installed bundle puts in the icon theme (the app
// ID of FyneApp.toml, as `fyne package` names it).
const IconName = "io.rootkeeper.app"

// xdgBackend is the XDG Autostart entry under configDir (XDG_CONFIG_HOME, or
// ~/.config when it is unset or not absolute, as the base-directory spec
// says).
func xdgBackend() (backend, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(home, ".config")
	}
	return &fileBackend{
		path:   filepath.Join(dir, "autostart", DesktopFileName),
		render: desktopEntry,
		active: desktopActive,
	}, nil
}

// desktopEntry is the autostart .desktop file for e (Desktop Entry
// Specification; it passes desktop-file-validate).
func desktopEntry(e *Entry) []byte {
	var b strings.Builder
	b.WriteString("[Desktop Entry]\n")
	b.WriteString("Type=Application\n")
	b.WriteString("Version=1.0\n")
	b.WriteString("Name=Rootkeeper\n")
	b.WriteString("Comment=Decide which folders each MCP server may see\n")
	b.WriteString("Exec=" + desktopString(execLine(append([]string{e.Exe}, e.Args...))) + "\n")
	b.WriteString("Icon=" + IconName + "\n")
	b.WriteString("Terminal=false\n")
	b.WriteString("NoDisplay=true\n")
	b.WriteString("X-GNOME-Autostart-enabled=true\n")
	return []byte(b.String())
}

// execLine quotes a command line for an Exec key: an argument holding a
// reserved character is put in double quotes, with ", `, $ and \ escaped
// by a backslash, and every % is doubled so no field code is read into it.
func execLine(argv []string) string {
	const reserved = " \t\n\"'\\><~|&;$*?#()`"
	parts := make([]string, len(argv))
	for i, a := range argv {
		a = strings.ReplaceAll(a, "%", "%%")
		if a != "" && !strings.ContainsAny(a, reserved) {
			parts[i] = a
			continue
		}
		var q strings.Builder
		q.WriteByte('"')
		for _, r := range a {
			if strings.ContainsRune("\"`$\\", r) {
				q.WriteByte('\\')
			}
			q.WriteRune(r)
		}
		q.WriteByte('"')
		parts[i] = q.String()
	}
	return strings.Join(parts, " ")
}

// desktopString escapes a value of type string: the Exec line's quoting
// backslashes are themselves escaped once more, as the spec asks.
func desktopString(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\t", "\\t", "\r", "\\r")
	return r.Replace(s)
}

// desktopActive reads the keys that switch an entry off: Hidden=true (the
// spec's way, used by desktops' own "startup applications" panels) and
// GNOME's X-GNOME-Autostart-enabled=false.
func desktopActive(content []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(content))
	group := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			group = line
			continue
		}
		if group != "[Desktop Entry]" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "Hidden" && v == "true" || k == "X-GNOME-Autostart-enabled" && v == "false" {
			return false
		}
	}
	return true
}
