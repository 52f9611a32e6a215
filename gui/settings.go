package gui

import (
	"fmt"

	"fyne.io/fyne/v2"

	"rootkeeper/app/autostart"
)

// settings is the window's menu bar: a "Rootkeeper" menu with the "Start at
// login" switch (a check mark), where desktop apps keep such a choice. The
// entry itself is package autostart's, the same one `rootkeeper autostart
// on|off` writes; reading and writing it touch the disk (and on Windows the
// registry), so both run off the UI goroutine.
type settings struct {
	u *ui
	// login is the "Start at login" item; Checked mirrors the entry once
	// read, Disabled while it is being read or written, or when it cannot
	// be read at all.
	login *fyne.MenuItem
	menu  *fyne.MainMenu
	// enabled and set are autostart.Enabled and autostart.Set.
	enabled func() (bool, error)
	set     func(bool) error
}

func newSettings(u *ui) *settings {
	s := &settings{u: u, enabled: autostart.Enabled, set: autostart.Set}
	s.login = fyne.NewMenuItem("Start at login", s.toggle)
	s.login.Disabled = true // until load has read the entry
	items := []*fyne.MenuItem{s.login}
	if quitApp := u.opts.QuitApp; quitApp != nil {
		// The window is a process of its own: its Quit quits Rootkeeper
		// (closing the window only closes it).
		quit := fyne.NewMenuItem("Quit Rootkeeper", func() {
			u.async(func() { quitApp(); u.do(u.fa.Quit) })
		})
		quit.IsQuit = true
		items = append(items, fyne.NewMenuItemSeparator(), quit)
	}
	// Without an item marked IsQuit, Fyne appends its own Quit.
	s.menu = fyne.NewMainMenu(fyne.NewMenu("Rootkeeper", items...))
	return s
}

// load reads whether Rootkeeper starts at login and shows it. A read that
// fails leaves the switch off and disabled: nothing is known to change.
func (s *settings) load() {
	s.u.async(func() {
		on, err := s.enabled()
		s.u.do(func() {
			s.login.Checked = on && err == nil
			s.login.Disabled = err != nil
			s.menu.Refresh()
		})
	})
}

// toggle turns starting at login over, then shows what the entry says
// now; a failure is shown in a dialog and the check mark stays as it was.
func (s *settings) toggle() {
	on := !s.login.Checked
	s.login.Disabled = true
	s.menu.Refresh()
	s.u.async(func() {
		err := s.set(on)
		now, readErr := s.enabled()
		s.u.do(func() {
			if readErr == nil {
				s.login.Checked = now
			}
			s.login.Disabled = readErr != nil
			s.menu.Refresh()
			if err != nil {
				what := "turn off start at login"
				if on {
					what = "turn on start at login"
				}
				s.u.showError(fmt.Errorf("%s: %w", what, err))
			}
		})
	})
}
