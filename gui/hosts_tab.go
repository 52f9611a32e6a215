package gui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/atomicfile"
	"rootkeeper/app/hosts"
	"rootkeeper/app/words"
)

// hostsTab lists the MCP hosts found on this computer (Claude Code,
// Cursor…) with their servers, and puts each host's servers behind the
// bridge (Protect) or gives its files back (Restore). The work is package
// hosts'; the tab reads the disk off the UI goroutine and shows what it
// found and what was done.
type hostsTab struct {
	u       *ui
	content fyne.CanvasObject
	list    *fyne.Container
	status  *widget.Label
	// found is the last listing shown; loading is true while one is read.
	found   []hosts.Found
	loading bool
	// result is the open result dialog, and guide the guided start's
	// question, for tests.
	result dialog.Dialog
	guide  *confirmDialog
	// home (the world's, from the last listing) shortens the config
	// files' paths to ~/… on the cards.
	home string
}

func newHostsTab(u *ui) *hostsTab {
	t := &hostsTab{u: u, list: container.NewVBox()}
	t.status = widget.NewLabel("")
	t.status.TextStyle.Italic = true
	refresh := widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), t.reload)
	top := container.NewBorder(nil, nil, nil, refresh,
		widget.NewLabel("MCP hosts on this computer. Protect makes a host start its servers through Rootkeeper, so they see only the folders you allowed."))
	t.content = container.NewBorder(top, t.status, nil, nil, container.NewVScroll(t.list))
	return t
}

// hostsOptions is what the tab hands package hosts: this process's world,
// this rootkeeper, and its state folder (named to the bridge when it is not
// the default).
func hostsOptions(store *app.Store) hosts.Options {
	o := hosts.Options{World: hosts.ThisWorld(), Store: store, Probe: hosts.ProbeOAuth}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			o.Executable = real
		}
	}
	if def, err := app.DefaultStateDir(); err != nil || filepath.Clean(def) != store.Dir() {
		o.StateDirArg = store.Dir()
	}
	// The projects Rootkeeper knows bring their project files.
	if withProjects, err := o.WithKnownProjects(); err == nil {
		o = withProjects
	}
	return o
}

// reload reads the hosts' files again (off the UI goroutine).
func (t *hostsTab) reload() {
	if t.loading {
		return
	}
	t.loading = true
	t.status.SetText("Looking for hosts…")
	o := t.u.hostsOptions()
	t.u.async(func() {
		found, err := hosts.List(o)
		t.u.do(func() {
			t.loading = false
			if err != nil {
				t.status.SetText("Could not read the hosts' files: " + words.SafeText(err.Error()))
				return
			}
			t.status.SetText("")
			t.found, t.home = found, o.World.Home
			t.render()
		})
	})
}

func (t *hostsTab) render() {
	fillList(t.list, fmt.Sprintf("No MCP host config found here (Rootkeeper knows %d hosts: Claude Code, Claude Desktop, Cursor, VS Code, Codex, Gemini CLI…; `rootkeeper hosts list --known` shows the files it looks at).", len(hosts.IDs())),
		len(t.found), func(i int) fyne.CanvasObject { return t.card(t.found[i]) })
}

func (t *hostsTab) card(h hosts.Found) fyne.CanvasObject {
	title := widget.NewLabelWithStyle(h.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	summary := widget.NewLabel(fmt.Sprintf("%s, %d protected", plural(h.Servers, "server"), h.Protected))
	protect := widget.NewButtonWithIcon("Protect", theme.ConfirmIcon(), func() { t.act(h.ID, true) })
	restore := widget.NewButtonWithIcon("Restore", theme.ContentUndoIcon(), func() { t.act(h.ID, false) })
	unprotected := 0
	recorded, kept := false, false
	var lines []string
	for _, f := range h.Files {
		kept = kept || f.Kept
		note := ""
		switch {
		case f.Refused != "":
			note = " — not read: " + words.SafeText(f.Refused)
		case f.Err != "":
			note = " — does not parse; left alone"
		case f.ChangedSinceProtect:
			note = " — changed since it was protected"
		}
		recorded = recorded || f.Recorded
		lines = append(lines, words.SafeText(words.HomeShort(f.Path, t.home))+note)
		for _, e := range f.Entries {
			state := "can see folders without asking you"
			switch {
			case e.Protected:
				state = "protected (" + e.Rootkeeper + ")"
			case e.Skip != "":
				state = "cannot protect: " + e.Skip
			default:
				unprotected++
			}
			scope := e.Scope
			if dir, ok := strings.CutPrefix(scope, "local "); ok {
				scope = "local " + words.HomeShort(dir, t.home)
			}
			lines = append(lines, "    "+words.SafeText(e.Name)+" · "+words.SafeText(scope)+" · "+words.SafeText(state))
		}
	}
	if unprotected == 0 {
		protect.Disable()
	} else {
		protect.Importance = widget.HighImportance
	}
	if !recorded {
		restore.Disable()
	}
	if hh, ok := hosts.Lookup(h.ID); ok && hh.AsksAgain && h.Servers > 0 {
		lines = append(lines, h.Name+" asks you to approve a server again once its entry changed: expect its prompt after Protect or Restore.")
	}
	// Keep protected: a server the host writes back is protected again
	// while the app runs (hosts protect --keep).
	keep := widget.NewCheck("Keep protected", nil)
	keep.SetChecked(kept)
	keep.OnChanged = func(on bool) { t.setKept(h.ID, on) }
	if !recorded {
		keep.Disable()
	}
	detail := widget.NewLabel(strings.Join(lines, "\n"))
	detail.Wrapping = fyne.TextWrapWord
	head := container.NewBorder(nil, nil, container.NewHBox(title, summary), container.NewHBox(keep, protect, restore))
	return widget.NewCard("", "", container.NewVBox(head, detail))
}

// setKept records, off the UI goroutine, whether host id's protected files
// stay protected, then reads the files again.
func (t *hostsTab) setKept(id string, keep bool) {
	h, ok := hosts.Lookup(id)
	if !ok {
		return
	}
	o := t.u.hostsOptions()
	t.u.async(func() {
		err := hosts.SetKept(h, o, keep)
		t.u.do(func() {
			if err != nil {
				t.u.showError(fmt.Errorf("keeping %s protected: %w", h.Name, err))
			}
			t.reload()
		})
	})
}

// act protects or restores host id off the UI goroutine, then says what was
// done and reads the files again.
func (t *hostsTab) act(id string, protect bool) {
	h, ok := hosts.Lookup(id)
	if !ok {
		return
	}
	o := t.u.hostsOptions()
	t.u.async(func() {
		var res []hosts.FileResult
		var err error
		if protect {
			res, err = hosts.Protect(h, o)
		} else {
			res, err = hosts.Restore(h, o)
		}
		// The servers were added through the store: the window shows
		// them now rather than when the file watcher next looks.
		if rerr := t.u.core.Reload(); err == nil {
			err = rerr
		}
		t.u.do(func() {
			if err != nil {
				t.u.showError(fmt.Errorf("%s %s: %w", map[bool]string{true: "Protecting", false: "Restoring"}[protect], h.Name, err))
			} else {
				text := widget.NewLabel(resultText(h, res, protect, o.World.Home))
				text.Wrapping = fyne.TextWrapWord
				scroll := container.NewVScroll(text)
				scroll.SetMinSize(fyne.NewSize(560, 240))
				t.result = newInfo(nil, h.Name, scroll, "OK", t.u.win)
				t.result.Show()
			}
			t.reload()
		})
	})
}

// resultText says in plain words what protect or restore did, with paths
// under home written from ~.
func resultText(h *hosts.Host, res []hosts.FileResult, protect bool, home string) string {
	var b strings.Builder
	written := false
	for _, r := range res {
		fmt.Fprintf(&b, "%s\n", words.HomeShort(r.Path, home))
		if protect {
			for _, ch := range r.Changes {
				fmt.Fprintf(&b, "  %s now runs through Rootkeeper as %s\n", ch.Entry.Name, ch.Entry.Rootkeeper)
				for _, sl := range ch.Slots {
					fmt.Fprintf(&b, "    it is configured with %s (%s): it starts once you allow it\n", words.HomeShort(sl.Path, home), sl.Where())
				}
				if len(ch.LostEnv) > 0 {
					fmt.Fprintf(&b, "    warning: it will not get %s (withheld from servers, and expanded by the host)\n", strings.Join(ch.LostEnv, ", "))
				}
			}
			for _, e := range r.Skipped {
				fmt.Fprintf(&b, "  %s left as it is: %s\n", e.Name, e.Skip)
			}
			if r.Already > 0 {
				fmt.Fprintf(&b, "  %d already protected\n", r.Already)
			}
			if r.Written {
				fmt.Fprintf(&b, "  backup: %s\n", words.HomeShort(r.Backup, home))
			}
		} else {
			switch r.How {
			case "byte for byte":
				b.WriteString("  given back exactly as it was\n")
			case "entries":
				b.WriteString("  edited since it was protected: only the servers Rootkeeper changed were put back\n")
				for _, k := range r.Kept {
					fmt.Fprintf(&b, "  %s was changed since, and is left as it is\n", k)
				}
			default:
				fmt.Fprintf(&b, "  %s\n", r.How)
			}
		}
		written = written || r.Written
	}
	if len(res) == 0 {
		b.WriteString("Nothing to do.\n")
	}
	if written && h.Running() {
		fmt.Fprintf(&b, "\n%s is running: restart it to pick up the change. Until then it keeps its old servers, and it may write its own copy of the file back (this tab shows whether the change held).", h.Name)
	}
	return words.SafeLines(b.String())
}

// guideMarker, in STATE_DIR/hosts, says the guided start was answered.
const guideMarker = "guided"

// guideHosts is the guided start: once, when hosts have servers that can
// see folders without asking, it offers to protect them all. After Protect
// the folders those servers were given and the hosts' working folders come
// up as requests to decide, like any other. Run calls it when the window
// is up; it reads the disk off the UI goroutine.
func (u *ui) guideHosts() {
	o := u.hostsOptions()
	marker := filepath.Join(o.Store.Dir(), "hosts", guideMarker)
	if _, err := os.Stat(marker); err == nil {
		return
	}
	u.async(func() {
		found, err := hosts.List(o)
		if err != nil {
			return
		}
		names, targets, n := unprotected(found)
		if n == 0 {
			return
		}
		u.do(func() { u.offerProtect(o, marker, names, targets, n) })
	})
}

// unprotected are the hosts of found with entries that could run the
// bridge and do not: their names, the hosts, and how many entries.
func unprotected(found []hosts.Found) (names []string, targets []*hosts.Host, n int) {
	for _, f := range found {
		open := 0
		for _, file := range f.Files {
			for _, e := range file.Entries {
				if !e.Protected && e.Skip == "" {
					open++
				}
			}
		}
		if open > 0 {
			h, _ := hosts.Lookup(f.ID)
			names, targets, n = append(names, f.Name), append(targets, h), n+open
		}
	}
	return names, targets, n
}

// offerProtect asks, on the UI goroutine, whether to protect the n
// entries of the hosts targets (called names), and protects them when
// the person says yes. Either answer is remembered in marker.
func (u *ui) offerProtect(o hosts.Options, marker string, names []string, targets []*hosts.Host, n int) {
	// Remembered off the UI goroutine; a marker that cannot be
	// written would bring the question back at every start, so
	// the person is told.
	answered := func() {
		u.async(func() {
			if err := rememberGuided(marker); err != nil {
				u.do(func() {
					u.showError(fmt.Errorf("your answer could not be remembered, so this question will come again at the next start: %w", err))
				})
			}
		})
	}
	msg := fmt.Sprintf("%s %s %s that can see folders without asking you. Protect them?\n\n"+
		"Rootkeeper will back up each config file, then make the host start those servers through Rootkeeper. "+
		"Each folder they were given stays in its configuration and is asked about: a server starts once you allow its folders. Restore gives the files back.",
		joinNames(names), map[bool]string{true: "has", false: "have"}[len(names) == 1], plural(n, "server"))
	u.hosts.guide = confirmText("Protect your MCP hosts?", msg, "Protect", "Not now", func(yes bool) {
		answered()
		if yes {
			u.async(func() { u.protectGuided(o, targets) })
		}
	}, u.win)
	u.hosts.guide.Show()
}

// protectGuided protects the hosts targets, off the UI goroutine, up to
// the first that fails, and shows what was done in the Hosts tab.
func (u *ui) protectGuided(o hosts.Options, targets []*hosts.Host) {
	var b strings.Builder
	var failed error
	for _, h := range targets {
		res, err := hosts.Protect(h, o)
		if err != nil {
			failed = fmt.Errorf("protecting %s: %w", h.Name, err)
			break
		}
		b.WriteString(resultText(h, res, true, o.World.Home) + "\n")
	}
	u.core.Reload()
	u.do(func() {
		if failed != nil {
			u.showError(failed)
		}
		text := widget.NewLabel(b.String())
		text.Wrapping = fyne.TextWrapWord
		scroll := container.NewVScroll(text)
		scroll.SetMinSize(fyne.NewSize(560, 240))
		u.hosts.result = newInfo(nil, "Hosts protected", scroll, "OK", u.win)
		u.hosts.result.Show()
		u.selectTab("Hosts")
		u.hosts.reload()
	})
}

// rememberGuided writes the marker that says the guided start was
// answered.
func rememberGuided(marker string) error {
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(marker, nil, atomicfile.Options{})
}

// joinNames writes "A", "A and B", "A, B and C".
func joinNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
