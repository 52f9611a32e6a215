package gui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/words"
)

// What a server's card says of its own state and of a confined run that
// failed, and the one-time offer to confine the servers an earlier
// version left unconfined.

// dataLine names where a confined server keeps its own settings, logs and
// data: its data folder, and what the table of known servers gives it in
// the home folder.
func (t *serversTab) dataLine(srv app.Server) string {
	if !srv.Confine || srv.Type != app.TransportStdio || t.u.opts.StateDir == "" {
		return ""
	}
	dir, err := app.ServerDataFolder(t.u.opts.StateDir, srv.Name)
	if err != nil {
		return ""
	}
	home := t.u.home()
	places := []string{words.HomeShort(dir, home)}
	if k, ok := app.KnownServerOf(srv); ok {
		for _, o := range k.Own {
			places = append(places, "~/"+strings.TrimSuffix(o, "/"))
		}
	}
	return words.SafeText("Its own settings and data: " + strings.Join(places, ", "))
}

// ownRows are the lines of server srv's card about what is its own: where
// it keeps its data, the folders it needs to run, the data of programs it
// ran before kept aside, and a confined start that failed with the way
// out.
func (t *serversTab) ownRows(snap *app.Snapshot, srv app.Server) []fyne.CanvasObject {
	var out []fyne.CanvasObject
	if line := t.dataLine(srv); line != "" {
		out = append(out, newPathLabel(line))
	}
	out = append(out, t.needRows(snap, srv.Name)...)
	out = append(out, t.keptRows(srv)...)
	if f, ok := snap.State.ConfineFailureOf(srv.Name); ok {
		out = append(out, t.failureRow(f))
	}
	return out
}

// failureRow says what a confined server reached for when it stopped, and
// offers the way out, the folder first: allow that folder for that server
// (app's AllowAsked: a folder it alone needs to run, or a decision when it
// is a root), or run it unconfined (audited, and undone by the Confine
// switch).
func (t *serversTab) failureRow(f app.ConfineFailure) fyne.CanvasObject {
	home := t.u.home()
	line := iconLine(theme.WarningIcon(), f.Text(home), widget.WarningImportance)
	buttons := container.NewHBox()
	if f.Folder != "" {
		buttons.Add(widget.NewButton(words.SafeText("Allow "+words.HomeShort(f.Folder, home)+" for "+f.Server), func() {
			t.u.update("allow "+f.Folder+" for "+f.Server, func(s *app.State) error {
				_, err := s.AllowAsked(f.Server, f.Folder, app.Always, app.ByWindow, t.u.now().UTC(), t.needPlace())
				return err
			}, nil)
		}))
	}
	if dest := f.Destination; dest != "" {
		buttons.Add(widget.NewButton("Allow "+words.SafeText(dest), func() {
			home := t.u.home()
			t.u.update("allow "+dest+" to "+f.Server, func(s *app.State) error {
				if err := s.NetworkAllow(f.Server, dest, home); err != nil {
					return err
				}
				t.u.auditNetwork(f.Server, audit.NetworkAllowed, dest, app.ByWindow)
				s.ClearConfineFailure(f.Server)
				return nil
			}, nil)
		}))
	}
	buttons.Add(widget.NewButton("Run it unconfined", func() {
		t.u.update("run "+f.Server+" unconfined", func(s *app.State) error {
			if err := s.SetConfinement(f.Server, false); err != nil {
				return err
			}
			t.auditConfinement(f.Server, false)
			return nil
		}, nil)
	}))
	return container.NewVBox(line, buttons)
}

// needPlace says where a folder a server needs to run may not be (app's
// CheckNeed): the home folder, the state folder.
func (t *serversTab) needPlace() app.NeedPlace {
	return app.NeedPlace{Home: t.u.home(), StateDir: t.u.opts.StateDir}
}

// needRows are the folders server needs to run (allowed to it alone), each
// with a button that takes it away (the server restarts without it).
func (t *serversTab) needRows(snap *app.Snapshot, server string) []fyne.CanvasObject {
	var out []fyne.CanvasObject
	home := t.u.home()
	for _, n := range snap.State.NeedsOf(server) {
		short := words.HomeShort(n.Path, home)
		take := widget.NewButton(words.SafeText("Take away "+short), func() {
			t.u.update("take "+n.Path+" away from "+server, func(s *app.State) error {
				s.RevokeNeed(server, n.Path)
				return nil
			}, nil)
		})
		out = append(out, container.NewBorder(nil, nil, nil, take,
			newPathLabel("Needs to run: "+short+" ("+n.Access+", for it alone)")))
	}
	return out
}

// keptRows are the data folders of programs srv ran before, kept aside,
// each with the way out: give it to the program it runs now, or remove it
// (asked first: it is deleted for good).
func (t *serversTab) keptRows(srv app.Server) []fyne.CanvasObject {
	if t.u.opts.StateDir == "" {
		return nil
	}
	var out []fyne.CanvasObject
	home := t.u.home()
	dir := t.u.opts.StateDir
	for _, k := range srv.KeptData {
		path, err := app.KeptDataFolder(dir, srv.Name, k.Name)
		if err != nil {
			continue
		}
		name, which := srv.Name, k.Name
		line := newPathLabel(fmt.Sprintf("Kept aside: the data of %s, in %s (since %s)", k.ProgramText(), words.HomeShort(path, home), k.At.Local().Format("2006-01-02 15:04")))
		use := widget.NewButton(words.SafeText("Give it to "+name), func() {
			t.u.update("give the kept data to "+name, func(s *app.State) error {
				_, err := s.UseKeptData(dir, name, which, home, t.u.now().UTC())
				return err
			}, nil)
		})
		remove := widget.NewButton("Remove it…", func() {
			confirmText("Remove the kept data?", words.SafeText(fmt.Sprintf("%s holds the data of %s, which ran as %s before. Removing it deletes it for good.",
				words.HomeShort(path, home), k.ProgramText(), name)), "Remove", "Keep it", func(yes bool) {
				if !yes {
					return
				}
				t.u.update("remove the kept data of "+name, func(s *app.State) error {
					_, err := s.RemoveKeptData(dir, name, which)
					return err
				}, nil)
			}, t.u.win).Show()
		})
		out = append(out, container.NewVBox(line, container.NewHBox(use, remove)))
	}
	return out
}

// auditConfinement writes the person's decision on a server's confinement
// to the audit log (called off the UI goroutine, within an update).
func (t *serversTab) auditConfinement(name string, on bool) {
	if t.u.opts.StateDir == "" {
		return
	}
	if err := audit.Confinement(t.u.opts.StateDir, name, on, string(app.ByWindow)); err != nil {
		fyne.LogError("writing the audit log", err)
	}
}

// renderOffer shows, until it is answered, the offer to confine the stdio
// servers an earlier version left unconfined (app.State.ConfineOffered).
func (t *serversTab) renderOffer(snap *app.Snapshot) {
	names := snap.State.ConfineOffered()
	if fmt.Sprint(names) == fmt.Sprint(t.offered) {
		return
	}
	t.offered = names
	t.offer.Objects = nil
	t.offer.Hide() // no room taken while there is nothing to offer
	if len(names) > 0 {
		t.offer.Show()
		text := fmt.Sprintf("%s set up before servers were confined by default %s unconfined: %s. Confined, each reaches only its folders, "+
			"its own data and what it needs to run.", plural(len(names), "server"), map[bool]string{true: "runs", false: "run"}[len(names) == 1],
			words.SafeText(listNames(names, 8)))
		label := widget.NewLabel(text)
		label.Wrapping = fyne.TextWrapWord
		answer := func(confine bool) func() {
			return func() {
				t.u.update("answer the offer to confine servers", func(s *app.State) error {
					offered := s.ConfineOffered()
					s.AnswerConfineOffer(confine)
					if confine {
						for _, n := range offered {
							t.auditConfinement(n, true)
						}
					}
					return nil
				}, nil)
			}
		}
		confineBtn := widget.NewButtonWithIcon("Confine them", theme.ConfirmIcon(), answer(true))
		confineBtn.Importance = widget.HighImportance
		t.offer.Add(widget.NewCard("", "", container.NewVBox(label,
			container.NewHBox(confineBtn, widget.NewButton("Keep them as they are", answer(false))))))
	}
	t.offer.Refresh()
}
