package gui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
)

// Decision choices in the Roots tab, one select per (root, server).
const (
	choiceAllow     = "Allowed"
	choiceUntilQuit = "Allowed until quit"
	choiceDeny      = "Denied"
	choiceUndecided = "Not asked yet"
)

// rootsTab lists every root with its path, health, branch, who sees it, an
// enable switch, every server's decision (changeable and revocable) and
// Remove.
type rootsTab struct {
	u       *ui
	content fyne.CanvasObject
	list    *fyne.Container
	add     *widget.Button
	// rows by root path, for tests.
	rows map[string]*rootRow
}

// rootRow holds one root's interactive widgets.
type rootRow struct {
	enabled   *widget.Check
	remove    *widget.Button
	decisions map[string]*widget.Select
}

func newRootsTab(u *ui) *rootsTab {
	t := &rootsTab{u: u, list: container.NewVBox()}
	t.add = widget.NewButtonWithIcon("Add folder…", theme.FolderOpenIcon(), t.pick)
	top := container.NewBorder(nil, nil, nil, t.add,
		widget.NewLabel("Folders servers may be shown. Nothing is shown to a server until you allow it."))
	t.content = container.NewBorder(top, nil, nil, nil, container.NewVScroll(t.list))
	return t
}

func (t *rootsTab) render(snap *app.Snapshot) {
	t.rows = map[string]*rootRow{}
	fillList(t.list, "No folders yet.\nUse Discover to find your projects, or Add folder… to pick one.",
		len(snap.State.Roots), func(i int) fyne.CanvasObject { return t.row(snap, snap.State.Roots[i]) })
}

func (t *rootsTab) row(snap *app.Snapshot, r app.Root) fyne.CanvasObject {
	path := r.Path
	rr := &rootRow{decisions: map[string]*widget.Select{}}
	t.rows[path] = rr
	h := snap.Health[path]

	rr.enabled = widget.NewCheck("Enabled", nil)
	rr.enabled.SetChecked(r.Enabled)
	rr.enabled.OnChanged = func(on bool) {
		setCheckedQuietly(rr.enabled, r.Enabled) // the snapshot decides what is shown
		if on {
			t.u.turnOn(path)
		} else {
			t.u.turnOff(path)
		}
	}
	rr.remove = widget.NewButtonWithIcon("Remove", theme.DeleteIcon(), func() { t.confirmRemove(r) })

	name := widget.NewLabelWithStyle(r.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	badges := container.NewHBox(healthBadge(h, r.Enabled))
	if b := branchOf(r, h); b != "" {
		badges.Add(widget.NewIcon(theme.NewThemedResource(theme.StorageIcon())))
		badges.Add(widget.NewLabel(b))
	}
	head := container.NewBorder(nil, nil, name, container.NewHBox(badges, rr.enabled, rr.remove))

	seen := app.SharedWith(snap, path)
	seenText := "Seen by no server"
	if len(seen) > 0 {
		seenText = "Seen by " + strings.Join(seen, ", ")
	}
	switch {
	case !r.Enabled:
		seenText += " (turned off)"
	case snap.State.Paused:
		seenText += " (sharing paused)"
	case !h.OK():
		seenText += " (until its access check passes)"
	}
	seenLabel := widget.NewLabel(seenText)
	if len(seen) == 0 {
		seenLabel.TextStyle.Italic = true
	}
	box := container.NewVBox(head, container.NewBorder(nil, nil, nil, seenLabel, newPathLabel(path)))
	if h.Err != "" && !h.OK() {
		box.Add(iconLine(theme.ErrorIcon(), h.Err, widget.DangerImportance))
	}
	if len(snap.State.Servers) > 0 {
		grid := container.NewGridWithColumns(2)
		for _, srv := range snap.State.Servers {
			grid.Add(container.NewBorder(nil, nil, widget.NewLabel(srv.Name+":"), nil, t.decisionSelect(snap, rr, srv, path)))
		}
		box.Add(grid)
	}
	return box
}

// decisionSelect shows and changes server's decision about the root at path.
func (t *rootsTab) decisionSelect(snap *app.Snapshot, rr *rootRow, srv app.Server, path string) fyne.CanvasObject {
	if srv.Mode() == app.RootsOff {
		l := widget.NewLabel("takes no roots (roots mode off)")
		l.TextStyle.Italic = true
		return l
	}
	sel := widget.NewSelect([]string{choiceAllow, choiceUntilQuit, choiceDeny, choiceUndecided}, nil)
	current := choiceUndecided
	if d, ok := snap.State.Decision(srv.Name, path); ok {
		switch {
		case d.Verdict == app.Deny:
			current = choiceDeny
		case d.Scope == app.UntilQuit:
			current = choiceUntilQuit
		default:
			current = choiceAllow
		}
	}
	sel.SetSelected(current)
	server := srv.Name
	sel.OnChanged = func(choice string) {
		if choice == current {
			return
		}
		t.u.update("change what "+server+" may see", func(s *app.State) error {
			d := app.Decision{Server: server, Root: path, Verdict: app.Allow, Scope: app.Always, By: app.ByDialog}
			switch choice {
			case choiceUndecided:
				s.Revoke(server, path)
				return nil
			case choiceDeny:
				d.Verdict = app.Deny
			case choiceUntilQuit:
				d.Scope = app.UntilQuit
			}
			return s.Decide(d)
		}, nil)
	}
	rr.decisions[server] = sel
	return sel
}

func branchOf(r app.Root, h app.Health) string {
	if h.Branch != "" {
		return h.Branch
	}
	return r.Branch
}

func (t *rootsTab) confirmRemove(r app.Root) {
	dialog.ShowConfirm("Remove "+r.Name+"?",
		"Rootkeeper forgets this folder and every decision about it. No server will see it. The folder itself is not touched.",
		func(ok bool) {
			if ok {
				t.u.update("remove "+r.Name, func(s *app.State) error { return s.RemoveRoot(r.Path) }, nil)
			}
		}, t.u.win)
}

// pick lets the person choose a folder and then asks whom to share it with.
func (t *rootsTab) pick() {
	dialog.ShowFolderOpen(func(dir fyne.ListableURI, err error) {
		if err != nil {
			t.u.showError(err)
			return
		}
		if dir == nil {
			return
		}
		t.u.shareFolder(dir.Path(), app.SourcePicked, "", "")
	}, t.u.win)
}

// shareFolder turns a folder into a root (off the UI goroutine: it resolves
// symlinks) and opens the share dialog for it, or, when it is already a
// root, the same dialog for that root.
func (u *ui) shareFolder(path string, src app.Source, branch, remote string) {
	u.async(func() {
		r, err := app.NewRoot(path, "", src)
		u.do(func() {
			if err != nil {
				u.showError(err)
				return
			}
			snap := u.core.Snapshot()
			if old, ok := snap.State.Root(r.Path); ok {
				u.askShare(old, false, takingServers(snap))
				return
			}
			r.Branch, r.Remote = branch, remote
			u.askShare(r, true, takingServers(snap))
		})
	})
}

// takingServers names the servers that take roots at all.
func takingServers(snap *app.Snapshot) []string {
	var out []string
	for _, srv := range snap.State.Servers {
		if srv.Mode() != app.RootsOff {
			out = append(out, srv.Name)
		}
	}
	return out
}

// setCheckedQuietly sets c without calling its OnChanged.
func setCheckedQuietly(c *widget.Check, on bool) {
	f := c.OnChanged
	c.OnChanged = nil
	c.SetChecked(on)
	c.OnChanged = f
}
