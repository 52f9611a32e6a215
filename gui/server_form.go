package gui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
)

// serverForm adds or edits one server: stdio (command, arguments,
// environment, working folder) or HTTP/SSE (URL, headers), its roots
// mode and its sampling mode. The values are checked with app.ValidateServer before OnSave.
type serverForm struct {
	Server  app.Server
	Editing bool // the name cannot change
	OnSave  func(app.Server)

	// hidden is what the fields show as "(secret)": the server's secrets
	// and references to the keyring, put back when it is saved.
	hidden app.Hidden

	name, command, args, env, cwd, url, headers *keyEntry
	typ, mode, sampling                         *keySelect
	form                                        *widget.Form
	dlg                                         *confirmDialog
	keys                                        *dialogKeys // Enter saves, Escape cancels
}

func (f *serverForm) build() {
	// A secret is never drawn: what holds one shows "(secret)" instead.
	s, hidden := app.ForEditing(f.Server)
	f.hidden = hidden
	f.keys = newDialogKeys()
	f.name = f.keys.entry(false)
	f.name.SetText(s.Name)
	f.name.SetPlaceHolder("filesystem")
	if f.Editing {
		f.name.Disable()
	}
	f.command = f.keys.entry(false)
	f.command.SetText(s.Command)
	f.command.SetPlaceHolder("npx")
	f.args = f.multiEntry(strings.Join(s.Args, "\n"), "one argument per line")
	f.env = f.multiEntry(joinMap(s.Env, "="), "NAME=value, one per line")
	f.cwd = f.keys.entry(false)
	f.cwd.SetText(s.Cwd)
	f.cwd.SetPlaceHolder("working folder (optional)")
	f.url = f.keys.entry(false)
	f.url.SetText(s.URL)
	f.url.SetPlaceHolder("https://example.com/mcp")
	f.headers = f.multiEntry(joinMap(s.Headers, ": "), "Name: value, one per line")
	f.mode = f.keys.choice([]string{string(app.RootsProtocol), string(app.RootsArgs), string(app.RootsEnv), string(app.RootsOff)}, nil)
	f.mode.SetSelected(string(s.Mode()))
	f.sampling = f.keys.choice([]string{string(app.SamplingReview), string(app.SamplingOff)}, nil)
	f.sampling.SetSelected(string(s.SamplingMode()))
	f.typ = f.keys.choice([]string{app.TransportStdio, app.TransportHTTP, app.TransportSSE}, func(string) { f.showFields() })

	f.form = widget.NewForm()
	typ := s.Type
	if typ == "" {
		typ = app.TransportStdio
	}
	f.typ.SetSelected(typ)
	f.showFields()
}

// showFields shows the fields of the chosen transport only.
func (f *serverForm) showFields() {
	if f.form == nil {
		return
	}
	items := []*widget.FormItem{
		widget.NewFormItem("Name", f.name),
		widget.NewFormItem("Type", f.typ),
	}
	if f.typ.Selected == app.TransportStdio {
		items = append(items,
			widget.NewFormItem("Command", f.command),
			widget.NewFormItem("Arguments", f.args),
			widget.NewFormItem("Environment", f.env),
			widget.NewFormItem("Working folder", f.cwd))
	} else {
		items = append(items,
			widget.NewFormItem("URL", f.url),
			widget.NewFormItem("Headers", f.headers))
	}
	mode := widget.NewFormItem("Roots", f.mode)
	mode.HintText = "protocol: answer roots/list · args, env: pass the folders at start (args: every local user can read them in the process list) · off: none"
	sampling := widget.NewFormItem("Sampling", f.sampling)
	sampling.HintText = "review: you review each request for a model's answer · off: not offered"
	f.form.Items = append(items, mode, sampling)
	f.form.Refresh()
}

// value reads the form into a server.
func (f *serverForm) value() (app.Server, error) {
	srv := app.Server{
		Name:      strings.TrimSpace(f.name.Text),
		Type:      f.typ.Selected,
		RootsMode: app.RootsMode(f.mode.Selected),
	}
	if srv.RootsMode == app.RootsProtocol {
		srv.RootsMode = ""
	}
	if f.sampling.Selected == string(app.SamplingOff) {
		srv.Sampling = app.SamplingOff
	}
	if srv.Type == app.TransportStdio {
		srv.Command = strings.TrimSpace(f.command.Text)
		srv.Args = lines(f.args.Text)
		srv.Cwd = strings.TrimSpace(f.cwd.Text)
		env, err := splitPairs(f.env.Text, "=")
		if err != nil {
			return srv, fmt.Errorf("environment: %w", err)
		}
		srv.Env = env
	} else {
		srv.URL = strings.TrimSpace(f.url.Text)
		h, err := splitPairs(f.headers.Text, ":")
		if err != nil {
			return srv, fmt.Errorf("headers: %w", err)
		}
		srv.Headers = h
	}
	srv, err := f.hidden.PutBack(srv)
	if err != nil {
		return srv, err
	}
	return srv, app.ValidateServer(srv)
}

// Show opens the form over parent.
func (f *serverForm) Show(parent fyne.Window) {
	f.build()
	title := "Add a server"
	if f.Editing {
		title = "Edit " + f.Server.Name
	}
	d := newConfirm(f.keys, title, f.form, "Save", "Cancel", func(ok bool) {
		if !ok {
			return
		}
		srv, err := f.value()
		if err != nil {
			showErrorOn(parent, err)
			return
		}
		if f.OnSave != nil {
			f.OnSave(srv)
		}
	}, parent)
	d.Resize(fyne.NewSize(620, 0))
	f.dlg = d
	d.Show()
}

func (f *serverForm) multiEntry(text, placeholder string) *keyEntry {
	e := f.keys.entry(true)
	e.SetText(text)
	e.SetPlaceHolder(placeholder)
	e.SetMinRowsVisible(2)
	return e
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// splitPairs reads "key<sep>value" lines.
func splitPairs(s, sep string) (map[string]string, error) {
	var m map[string]string
	for _, l := range lines(s) {
		k, v, ok := strings.Cut(l, sep)
		if !ok {
			return nil, fmt.Errorf("%q has no %q", l, sep)
		}
		if m == nil {
			m = map[string]string{}
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m, nil
}

func joinMap(m map[string]string, sep string) string {
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, k+sep+m[k])
	}
	return strings.Join(out, "\n")
}
