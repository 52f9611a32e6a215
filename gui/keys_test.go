package gui

import (
	"errors"
	"testing"

	"fyne.io/fyne/v2"

	"rootkeeper/app"
)

// typeKey sends a key to the window the way the desktop driver does: Tab
// moves the focus within the top dialog; any other key goes to the focused
// widget, or, when nothing has the focus, to the canvas's handler.
func typeKey(c fyne.Canvas, name fyne.KeyName) {
	if name == fyne.KeyTab {
		c.FocusNext()
		return
	}
	ev := &fyne.KeyEvent{Name: name}
	if f := c.Focused(); f != nil {
		f.TypedKey(ev)
		return
	}
	if h := c.OnTypedKey(); h != nil {
		h(ev)
	}
}

// typeSpace is Space as the driver sends it to a focused widget: a rune.
func typeSpace(t *testing.T, c fyne.Canvas) {
	t.Helper()
	f := c.Focused()
	if f == nil {
		t.Fatal("Space with nothing focused")
	}
	f.TypedRune(' ')
	f.TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
}

// The request dialog, from the keyboard alone: Escape puts the request off
// (the next one is asked), Tab walks the scope and the buttons in order,
// the arrows move the scope, Enter presses the focused button, and with
// nothing focused Enter is Allow.
func TestRequestDialogKeyboard(t *testing.T) {
	f := newFixture(t, Options{}, twoRequests)
	c := f.win.Canvas()
	d := openRequest(t, f)
	if c.Focused() != nil {
		t.Fatalf("%T has the focus when the dialog opens; Escape and Enter would not reach it", c.Focused())
	}
	typeKey(c, fyne.KeyEscape)
	if _, ok := f.core.Snapshot().State.Request("fs", reqX); !ok || len(f.core.Snapshot().State.Decisions) != 0 {
		t.Fatal("Escape decided something; it is Later")
	}
	d2 := openRequest(t, f)
	if d2 == d || d2.Request.Path != reqY {
		t.Fatalf("after Escape the dialog asks about %s, want the next request %s", d2.Request.Path, reqY)
	}

	var order []fyne.Focusable
	for range 4 {
		typeKey(c, fyne.KeyTab)
		order = append(order, c.Focused())
	}
	want := []fyne.Focusable{d2.scope, d2.deny, d2.later, d2.allow}
	for i := range want {
		if order[i] != want[i] {
			t.Errorf("Tab %d focuses %T %p, want %T %p", i+1, order[i], order[i], want[i], want[i])
		}
	}
	c.Focus(d2.scope)
	typeKey(c, fyne.KeyRight)
	if d2.scope.Selected != scopeUntilQuit {
		t.Errorf("Right on the scope chose %q", d2.scope.Selected)
	}
	c.Focus(d2.allow)
	typeKey(c, fyne.KeyReturn)
	f.u.refresh()
	f.wantDecisions("fs " + reqY + " allow until-quit dialog")
	if _, ok := keyStacks[c]; ok {
		t.Error("the dialog's keys outlived it")
	}

	// Put off reqX is asked again at the next start; here, with nothing
	// focused, Enter is Allow.
	f.u.queue = app.ConsentQueue{}
	f.u.refresh()
	d3 := openRequest(t, f)
	if d3.Request.Path != reqX {
		t.Fatalf("asked about %s", d3.Request.Path)
	}
	c.Unfocus()
	typeKey(c, fyne.KeyEnter)
	f.u.refresh()
	f.wantDecisions("fs "+reqY+" allow until-quit dialog", "fs "+reqX+" allow always dialog")
}

// Enter on a focused Deny presses Deny, not the default.
func TestEnterPressesTheFocusedButton(t *testing.T) {
	f := newFixture(t, Options{}, twoRequests)
	c := f.win.Canvas()
	d := openRequest(t, f)
	c.Focus(d.deny)
	typeKey(c, fyne.KeyReturn)
	f.u.refresh()
	f.wantDecisions("fs " + reqX + " deny always dialog")
}

// The share dialog: Space on a focused server's box ticks it, Escape with
// a box focused still cancels, Enter shares with the ticked.
func TestShareDialogKeyboard(t *testing.T) {
	f := newFixture(t, Options{}, oneRootTwoServers)
	c := f.win.Canvas()
	f.u.askShare(fakeRoot("/home/ada/src/new", true), true, []string{"fs", "git"})
	d, ok := f.u.openDialog.(*shareDialog)
	if !ok {
		t.Fatalf("no share dialog: %T", f.u.openDialog)
	}
	typeKey(c, fyne.KeyTab)
	if c.Focused() != d.checks[0] {
		t.Fatalf("Tab focuses %T, want fs's box", c.Focused())
	}
	typeKey(c, fyne.KeyEscape)
	if f.u.consent != "" {
		t.Error("Escape on a focused box did not cancel")
	}
	if _, ok := f.core.Snapshot().State.Root("/home/ada/src/new"); ok {
		t.Error("Cancel added the folder")
	}

	f.u.askShare(fakeRoot("/home/ada/src/new", true), true, []string{"fs", "git"})
	d = f.u.openDialog.(*shareDialog)
	typeKey(c, fyne.KeyTab)
	typeSpace(t, c)
	if !d.checks[0].Checked {
		t.Fatal("Space did not tick fs")
	}
	typeKey(c, fyne.KeyReturn) // Enter on a box: the default, Share
	f.wantDecisions("fs /home/ada/src/new allow always dialog", "git /home/ada/src/new deny always dialog")
}

// The review and the one-server dialog: Escape is Later (nothing decided,
// the banner offers it again); Enter allows the ticked.
func TestConsentDialogsKeyboard(t *testing.T) {
	f := demoFixture(t, Options{})
	c := f.win.Canvas()
	if err := f.core.Update(func(s *app.State) error { return s.SetEnabled(rootC, true) }); err != nil {
		t.Fatal(err)
	}
	f.core.SetHealth(rootC, app.Health{Status: app.HealthOK})
	f.connect("git")
	rd, ok := f.u.openDialog.(*reviewDialog)
	if !ok {
		t.Fatalf("no review: %T", f.u.openDialog)
	}
	before := f.decisions()
	// Escape from the filter field, from the list, and with nothing focused.
	c.Focus(rd.filter)
	typeKey(c, fyne.KeyEscape)
	if f.u.openDialog != nil || len(f.decisions()) != len(before) || len(f.u.grid.Questions()) == 0 {
		t.Fatalf("Escape in the filter: open %T, decisions %v", f.u.openDialog, f.decisions())
	}
	if f.u.bannerKey == "" || len(f.u.banner.Objects) == 0 {
		t.Error("after Later no banner offers the review")
	}
	f.u.reviewNow()
	rd = f.u.openDialog.(*reviewDialog)
	typeKey(c, fyne.KeyReturn) // nothing ticked: the rest is denied
	f.u.refresh()
	if q := f.u.grid.Questions(); len(q) != 0 {
		t.Errorf("after Enter still asked: %v", q)
	}

	// One server, one folder: the small dialog; Escape is Later there too.
	g := newFixture(t, Options{}, oneRootTwoServers)
	g.healthy()
	g.connect("fs")
	pd, ok := g.u.openDialog.(*pendingDialog)
	if !ok {
		t.Fatalf("no pending dialog: %T", g.u.openDialog)
	}
	gc := g.win.Canvas()
	gc.Focus(pd.checks[0])
	typeKey(gc, fyne.KeyEscape)
	if g.u.consent != "" || len(g.decisions()) != 0 {
		t.Fatalf("Escape: consent %q, decisions %v", g.u.consent, g.decisions())
	}
	g.u.reviewNow()
	pd = g.u.openDialog.(*pendingDialog)
	gc.Focus(pd.checks[0])
	typeSpace(t, gc)
	typeKey(gc, fyne.KeyReturn)
	g.wantDecisions("fs " + rootA + " allow always dialog")
}

// A dialog over a dialog: Escape closes the top one only; every confirm
// answers Enter (yes) and Escape (no).
func TestDialogKeysStack(t *testing.T) {
	f := newFixture(t, Options{}, nil)
	c := f.win.Canvas()
	var answers []bool
	q := confirmText("Remove alpha?", "Forget it.", "Remove", "Cancel", func(yes bool) { answers = append(answers, yes) }, f.win)
	q.Show()
	f.u.showError(errors.New("disk full"))
	typeKey(c, fyne.KeyEscape) // the error
	if len(answers) != 0 {
		t.Fatalf("Escape on the error answered the question below: %v", answers)
	}
	typeKey(c, fyne.KeyReturn) // the question
	if len(answers) != 1 || !answers[0] {
		t.Fatalf("Enter: %v, want yes", answers)
	}
	typeKey(c, fyne.KeyReturn)
	if len(answers) != 1 {
		t.Errorf("a closed question answered again: %v", answers)
	}
	q = confirmText("Remove beta?", "Forget it.", "Remove", "Cancel", func(yes bool) { answers = append(answers, yes) }, f.win)
	q.Show()
	typeKey(c, fyne.KeyTab)
	typeKey(c, fyne.KeyTab) // Cancel, then Remove
	if c.Focused() != q.yes {
		t.Fatalf("Tab twice focuses %T", c.Focused())
	}
	typeKey(c, fyne.KeyEscape)
	if len(answers) != 2 || answers[1] {
		t.Errorf("Escape on a focused Remove: %v, want no", answers)
	}
	if c.OnTypedKey() != nil {
		t.Error("the window keeps a dialog's key handler after every dialog closed")
	}
}

// The per-folder view closes on Escape even from one of its switches.
func TestFolderAccessKeyboard(t *testing.T) {
	f := demoFixture(t, Options{})
	c := f.win.Canvas()
	f.u.showFolderAccess(rootA)
	fv := f.u.folderView
	if fv == nil || len(fv.items) == 0 {
		t.Fatal("no per-folder view")
	}
	c.Focus(fv.items[0].choice)
	typeKey(c, fyne.KeyEscape)
	if f.u.folderView != nil {
		t.Error("Escape on a focused switch left the per-folder view open")
	}
}
