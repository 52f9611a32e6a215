package gui

import (
	"fmt"
	"os"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/audit"
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
	places := []string{app.HomeShort(dir, home)}
	if k, ok := app.KnownServerOf(srv); ok {
		for _, o := range k.Own {
			places = append(places, "~/"+strings.TrimSuffix(o, "/"))
		}
	}
	return app.SafeText("Its own settings and data: " + strings.Join(places, ", "))
}

// failureRow says what a confined server reached for when it stopped, and
// offers the way out: allow that folder (a decision like any other), or
// run it unconfined (audited, and undone by the Confine switch).
func (t *serversTab) failureRow(f app.ConfineFailure) fyne.CanvasObject {
	line := iconLine(theme.WarningIcon(), f.Text(t.u.home()), widget.WarningImportance)
	buttons := container.NewHBox()
	if f.Folder != "" {
		buttons.Add(widget.NewButton("Allow "+app.SafeText(app.HomeShort(f.Folder, t.u.home())), func() {
			t.u.update("allow "+f.Folder+" to "+f.Server, func(s *app.State) error {
				if f.Own {
					// A settings folder of its own: made, as the
					// server would have made it.
					if err := os.MkdirAll(f.Folder, 0o700); err != nil {
						return err
					}
				}
				if _, exists := s.Root(f.Folder); !exists {
					if err := s.AddRoot(app.Root{Path: f.Folder, Source: app.SourceRequested, Enabled: true, Added: time.Now().UTC()}); err != nil {
						return err
					}
				}
				if err := s.Decide(app.Decision{Server: f.Server, Root: f.Folder, Verdict: app.Allow, Scope: app.Always, By: app.ByWindow}); err != nil {
					return err
				}
				s.ClearConfineFailure(f.Server)
				return nil
			}, nil)
		}))
	}
	if dest := f.Destination; dest != "" {
		buttons.Add(widget.NewButton("Allow "+app.SafeText(dest), func() {
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
			app.SafeText(listNames(names, 8)))
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
