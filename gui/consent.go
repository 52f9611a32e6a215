package gui

import (
	"fmt"

	"rootkeeper/app"
)

// rootInfo is what a consent dialog shows about a root: the root, the
// result of its access check and its risk warnings. Building one reads the
// disk, so it is done off the UI goroutine (see inspect).
type rootInfo struct {
	Root     app.Root
	Access   app.Health
	Warnings []string
}

// inspect runs the access check and the risk warnings for each root. It
// reads the disk: call it off the UI goroutine.
func inspect(roots []app.Root, home string) []rootInfo {
	out := make([]rootInfo, len(roots))
	for i, r := range roots {
		out[i] = rootInfo{Root: r, Access: app.CheckAccess(r.Path, 0), Warnings: app.RiskWarnings(r, home)}
	}
	return out
}

// askNext opens a consent dialog for the first server (in configuration
// order) that is connected and has enabled roots it has no decision for,
// unless a consent dialog is already open. One dialog per server; the next
// opens when this one is answered.
func (u *ui) askNext() {
	if u.consent != "" || u.snap == nil {
		return
	}
	for _, name := range u.snap.ServerNames() {
		if u.busy[name] || u.snap.Servers[name].State != app.ServerConnected {
			continue
		}
		pending := app.Pending(u.snap, name)
		if len(pending) == 0 {
			continue
		}
		u.askServer(name, pending)
		return
	}
}

// askServer opens the "server wants roots" dialog (dialog 2) for server.
func (u *ui) askServer(server string, pending []app.Root) {
	key := "server:" + server
	u.consent = key
	home := u.home()
	u.async(func() {
		infos := u.inspect(pending, home)
		u.do(func() {
			if u.consent != key {
				return
			}
			d := &pendingDialog{Server: server, Roots: infos}
			d.OnSubmit = func(allowed, denied []string, scope app.Scope) {
				u.consent = ""
				u.busy[server] = true
				u.update("record the decision for "+server, func(s *app.State) error {
					return decideAll(s, server, allowed, denied, scope)
				}, func(error) { delete(u.busy, server) })
			}
			u.raise()
			u.notify("Rootkeeper", fmt.Sprintf("%s is waiting for your decision about %s.", server, plural(len(infos), "folder")))
			d.Show(u.win)
			u.openDialog = d
		})
	})
}

// decideAll records, for one server, allow for each path in allowed and
// deny for each in denied, all with scope, made in a dialog.
func decideAll(s *app.State, server string, allowed, denied []string, scope app.Scope) error {
	for _, p := range allowed {
		if err := s.Decide(app.Decision{Server: server, Root: p, Verdict: app.Allow, Scope: scope, By: app.ByDialog}); err != nil {
			return err
		}
	}
	for _, p := range denied {
		if err := s.Decide(app.Decision{Server: server, Root: p, Verdict: app.Deny, Scope: scope, By: app.ByDialog}); err != nil {
			return err
		}
	}
	return nil
}

// askShare opens the "share a folder" dialog (dialog 1) for root, asking
// about servers. isNew says the root is not in the state yet: sharing adds
// it. The root ends up enabled; ticked servers get allow, the others deny.
func (u *ui) askShare(root app.Root, isNew bool, servers []string) {
	key := "root:" + root.Path
	if u.consent != "" {
		if u.consent != key {
			u.showError(fmt.Errorf("answer the open question first, then share %s", root.Name))
		}
		return
	}
	u.consent = key
	home := u.home()
	u.async(func() {
		info := u.inspect([]app.Root{root}, home)[0]
		u.do(func() {
			if u.consent != key {
				return
			}
			d := &shareDialog{Root: info, Servers: servers, IsNew: isNew}
			d.OnCancel = func() { u.consent = ""; u.refresh() }
			d.OnSubmit = func(allowed, denied []string, scope app.Scope) {
				u.consent = ""
				u.update("share "+root.Name, func(s *app.State) error {
					return shareRoot(s, root, isNew, allowed, denied, scope)
				}, nil)
			}
			u.raise()
			d.Show(u.win)
			u.openDialog = d
		})
	})
}

// shareRoot adds (if new) and enables root and records the answers of a
// share dialog, in one state change.
func shareRoot(s *app.State, root app.Root, isNew bool, allowed, denied []string, scope app.Scope) error {
	if isNew {
		if _, exists := s.Root(root.Path); !exists {
			root.Enabled = true
			if err := s.AddRoot(root); err != nil {
				return err
			}
		}
	}
	if err := s.SetEnabled(root.Path, true); err != nil {
		return err
	}
	for _, srv := range allowed {
		if err := s.Decide(app.Decision{Server: srv, Root: root.Path, Verdict: app.Allow, Scope: scope, By: app.ByDialog}); err != nil {
			return err
		}
	}
	for _, srv := range denied {
		if err := s.Decide(app.Decision{Server: srv, Root: root.Path, Verdict: app.Deny, Scope: scope, By: app.ByDialog}); err != nil {
			return err
		}
	}
	return nil
}

// turnOn is what ticking a root (tray or Roots tab) does: with a server
// that has no decision about it, or when nobody is allowed to see it, it
// opens the share dialog instead of exposing anything; otherwise it enables
// the root for the servers already allowed.
func (u *ui) turnOn(path string) {
	snap := u.core.Snapshot()
	root, ok := snap.State.Root(path)
	if !ok {
		return
	}
	ask := app.Undecided(snap, path)
	if len(ask) == 0 && len(app.AllowedBy(snap, path)) == 0 {
		for _, srv := range snap.State.Servers {
			if srv.Mode() != app.RootsOff {
				ask = append(ask, srv.Name)
			}
		}
	}
	if len(ask) > 0 {
		u.askShare(root, false, ask)
		return
	}
	u.update("turn on "+root.Name, func(s *app.State) error { return s.SetEnabled(path, true) }, nil)
}

// turnOff disables the root at path for every server.
func (u *ui) turnOff(path string) {
	u.update("turn off "+path, func(s *app.State) error { return s.SetEnabled(path, false) }, nil)
}

// raise shows the window (a dialog needs one) and focuses it.
func (u *ui) raise() { u.showWindow() }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
