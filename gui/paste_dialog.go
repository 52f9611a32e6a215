package gui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/serverentry"
	"rootkeeper/app/words"
)

// pasteDialog takes server definitions pasted from another app's config
// (an "mcpServers" block, VS Code's "servers", opencode's "mcp", or one
// entry), read as `rootkeeper import` reads them (serverentry.Parse), and
// shows what it found, and what it leaves out and why, before adding them.
type pasteDialog struct {
	OnImport func([]app.Server)

	text    *keyEntry
	preview *widget.Label
	found   []app.Server
	dlg     *confirmDialog
	keys    *dialogKeys // Enter adds, Escape cancels
}

func (d *pasteDialog) content() fyne.CanvasObject {
	d.keys = newDialogKeys()
	d.text = d.keys.entry(true)
	d.text.SetPlaceHolder(`{"mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}}}`)
	d.text.SetMinRowsVisible(10)
	d.text.Wrapping = fyne.TextWrapBreak
	d.preview = widget.NewLabel("Paste a config to see the servers in it.")
	d.preview.Wrapping = fyne.TextWrapWord
	d.text.OnChanged = func(string) { d.parse() }
	return container.NewBorder(nil, d.preview, nil, nil, d.text)
}

// parse reads the pasted text and says what it found.
func (d *pasteDialog) parse() {
	d.found = nil
	if strings.TrimSpace(d.text.Text) == "" {
		d.preview.SetText("Paste a config to see the servers in it.")
		d.preview.Importance = widget.MediumImportance
		d.preview.Refresh()
		return
	}
	cfg, err := serverentry.Parse([]byte(d.text.Text))
	if err != nil {
		d.preview.SetText(err.Error())
		d.preview.Importance = widget.DangerImportance
		d.preview.Refresh()
		return
	}
	d.found = cfg.Servers
	// What each server runs, before anything starts: the command, its
	// arguments, the names of its environment variables, or its URL; and
	// what is left out, and why.
	var b strings.Builder
	if len(cfg.Servers) > 0 {
		b.WriteString("Found " + plural(len(cfg.Servers), "server") + ":")
		for _, s := range cfg.Servers {
			fmt.Fprintf(&b, "\n• %s: %s", words.SafeText(s.Name), app.Program(s))
		}
	}
	if len(cfg.Skipped) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Left out:")
		for _, sk := range cfg.Skipped {
			fmt.Fprintf(&b, "\n• %s: %s", words.SafeText(sk.Name), words.SafeText(sk.Why))
		}
	}
	d.preview.Importance = widget.WarningImportance
	if len(cfg.Servers) > 0 {
		b.WriteString("\nAdded servers see no folder until you allow one.")
		d.preview.Importance = widget.SuccessImportance
	}
	d.preview.SetText(b.String())
	d.preview.Refresh()
}

// Show opens the dialog over parent.
func (d *pasteDialog) Show(parent fyne.Window) {
	body := d.content()
	d.dlg = newConfirm(d.keys, "Paste servers from another app", body, "Add servers", "Cancel", func(ok bool) {
		if !ok {
			return
		}
		d.parse()
		if len(d.found) == 0 {
			showErrorOn(parent, fmt.Errorf("no servers to add: %s", d.preview.Text))
			return
		}
		if d.OnImport != nil {
			d.OnImport(d.found)
		}
	}, parent)
	d.dlg.Resize(fyne.NewSize(680, 440))
	d.dlg.Show()
}
