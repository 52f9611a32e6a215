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

// askNext asks what the consent queue (app.ConsentQueue) says comes next,
// unless a consent dialog is already open: a single question (one folder,
// one server) in the small dialog, several in one review screen, a folder
// asked for a server, or, while servers are still starting, nothing yet.
func (u *ui) askNext() {
	if u.snap == nil || u.grid == nil {
		return
	}
	if d, ok := u.openDialog.(*reviewDialog); ok && u.consent == "review" {
		u.growReview(d)
		return
	}
	if u.consent != "" {
		return
	}
	ask := u.queue.Next(u.grid, u.now())
	switch ask.Kind {
	case app.AskWait:
		if !u.settling {
			u.settling = true
			u.after(ask.Wait, func() {
				u.settling = false
				u.askNext()
			})
		}
	case app.AskQuestion:
		u.askServer(ask.Questions[0].Server, []app.Root{ask.Questions[0].Root})
	case app.AskReview:
		u.askReview(ask.Questions)
	case app.AskRequest:
		u.askRequest(ask.Request)
	}
}

// askReview opens the review screen for qs (off the UI goroutine first:
// the access checks read the disk).
func (u *ui) askReview(qs []app.Question) {
	key := "review"
	u.consent = key
	home := u.home()
	var roots []app.Root
	seen := map[string]bool{}
	for _, q := range qs {
		if !seen[q.Root.Path] {
			seen[q.Root.Path] = true
			roots = append(roots, q.Root)
		}
	}
	u.async(func() {
		infos := u.inspect(roots, home)
		u.do(func() {
			if u.consent != key {
				return
			}
			info := make(map[string]rootInfo, len(infos))
			for _, in := range infos {
				info[in.Root.Path] = in
			}
			d := &reviewDialog{Questions: qs, Info: info, Home: home}
			d.OnLater = func() {
				u.consent = ""
				u.openDialog = nil
				u.queue.PutOff(d.Questions) // grown since it opened
				u.laterChanged()
				u.snap = nil // the banner offers the review again
				u.refresh()
			}
			d.OnSubmit = func(allowed map[int]bool, scope app.Scope) {
				u.consent = ""
				u.openDialog = nil
				qs := d.Questions // grown since it opened
				servers := app.Servers(qs)
				u.queue.Answering(servers...)
				u.update("record your answers", func(s *app.State) error {
					return s.DecideAll(app.Answers(qs, allowed, scope, app.ByDialog))
				}, func(error) { u.queue.Answered(servers...) })
			}
			u.raise()
			u.notify("Rootkeeper", fmt.Sprintf("%s waiting for your decision.", plural(len(qs), "folder question")))
			d.Show(u.win)
			u.openDialog = d
			u.onScreen("review")
		})
	})
}

// growReview adds to the open review the questions that came since it
// opened: twenty servers connecting one after the other make one screen,
// not a queue of twenty.
func (u *ui) growReview(d *reviewDialog) {
	if d.growing {
		return
	}
	fresh := u.queue.Fresh(u.grid, d.asked)
	var roots []app.Root
	seen := map[string]bool{}
	for _, q := range fresh {
		if _, ok := d.Info[q.Root.Path]; !ok && !seen[q.Root.Path] {
			seen[q.Root.Path] = true
			roots = append(roots, q.Root)
		}
	}
	if len(fresh) == 0 {
		return
	}
	d.growing = true
	home := u.home()
	u.async(func() {
		infos := u.inspect(roots, home)
		u.do(func() {
			d.growing = false
			if u.openDialog == d {
				d.add(fresh, infos)
			}
		})
	})
}

// reviewNow opens the review of every waiting question, also those put
// off (the banner's Review… button).
func (u *ui) reviewNow() {
	u.queue.ReviewAll()
	u.laterChanged()
	u.askNext()
}

// laterChanged tells the running app what the person has put off now
// (Options.OnLater), for the next window.
func (u *ui) laterChanged() {
	if u.opts.OnLater != nil {
		u.opts.OnLater(u.queue.Later())
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
			d := &pendingDialog{Server: server, Roots: infos, Home: home}
			d.OnLater = func() { // as the review's Later: the banner asks again
				u.consent = ""
				u.openDialog = nil
				qs := make([]app.Question, len(infos))
				for i, in := range infos {
					qs[i] = app.Question{Server: server, Root: in.Root}
				}
				u.queue.PutOff(qs)
				u.laterChanged()
				u.snap = nil
				u.refresh()
			}
			d.OnSubmit = func(allowed, denied []string, scope app.Scope) {
				u.consent = ""
				u.queue.Answering(server)
				u.update("record the decision for "+server, func(s *app.State) error {
					return s.DecideAll(app.Answer(server, allowed, denied, scope, app.ByDialog))
				}, func(error) { u.queue.Answered(server) })
			}
			u.raise()
			u.notify("Rootkeeper", fmt.Sprintf("%s is waiting for your decision about %s.", personName(server), plural(len(infos), "folder")))
			d.Show(u.win)
			u.openDialog = d
			u.onScreen("question")
		})
	})
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
			d := &shareDialog{Root: info, Servers: servers, IsNew: isNew, Home: home}
			d.OnCancel = func() { u.consent = ""; u.refresh() }
			d.OnSubmit = func(allowed, denied []string, scope app.Scope) {
				u.consent = ""
				u.update("share "+root.Name, func(s *app.State) error {
					return s.Share(root, isNew, allowed, denied, scope, app.ByDialog)
				}, nil)
			}
			u.raise()
			d.Show(u.win)
			u.openDialog = d
			u.onScreen("share dialog")
		})
	})
}

// turnOn is what ticking a root (tray or Roots tab) does, as
// app.PlanTurnOn says: ask in the share dialog, or enable the root for the
// servers already allowed.
func (u *ui) turnOn(path string) {
	plan, ok := app.PlanTurnOn(u.core.Snapshot(), path)
	switch {
	case !ok:
		return
	case len(plan.Ask) > 0:
		u.askShare(plan.Root, false, plan.Ask)
	case plan.Enable:
		u.update("turn on "+plan.Root.Name, func(s *app.State) error { return s.SetEnabled(path, true) }, nil)
	}
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
