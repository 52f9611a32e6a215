package gui

import (
	"context"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
)

// Every empty tab reads as sentences: its label is as wide as its longest
// line, not a column one letter wide (a wrapping label in a centring
// container gets no width), and it offers the action that fills the tab.
func TestEmptyStatesReadAsSentences(t *testing.T) {
	f := newFixture(t, Options{Scan: noScan}, nil)
	for _, c := range []struct {
		tab     string
		empty   *emptyState
		says    string
		actions []string
	}{
		{"Roots", f.u.roots.empty, "No folders yet.", []string{"Find projects", "Add folder…"}},
		{"Discover", f.u.discover.empty, "No projects listed yet.", []string{"Scan now"}},
		{"Access", f.u.access.empty, "No server takes folders yet.", []string{"Add a server or protect a host"}},
	} {
		t.Run(c.tab, func(t *testing.T) {
			f.u.selectTab(c.tab)
			f.capture("empty-" + strings.ToLower(c.tab) + ".png")
			e := c.empty
			if !e.Visible() {
				t.Fatal("the empty state is hidden")
			}
			if !strings.HasPrefix(e.label.Text, c.says) {
				t.Errorf("it says %q, want it to start with %q", e.label.Text, c.says)
			}
			size := e.label.Size()
			for _, line := range strings.Split(e.label.Text, "\n") {
				w := fyne.MeasureText(line, theme.TextSize(), e.label.TextStyle).Width
				if size.Width < w {
					t.Errorf("label %v is narrower than its line %q (%v): it breaks the line", size, line, w)
				}
			}
			lines := float32(strings.Count(e.label.Text, "\n") + 1)
			if size.Width < 4*size.Height || size.Height > lines*2*theme.TextSize()+2*theme.InnerPadding() {
				t.Errorf("label %v for %v lines: a column, not sentences", size, lines)
			}
			var got []string
			for _, o := range e.actions.Objects {
				if b, ok := o.(*widget.Button); ok {
					got = append(got, b.Text)
				}
			}
			if strings.Join(got, "|") != strings.Join(c.actions, "|") {
				t.Errorf("actions %q, want %q", got, c.actions)
			}
		})
	}

	// Access's action goes where servers are added and hosts protected.
	f.u.selectTab("Access")
	test.Tap(f.u.access.toHosts)
	if got := f.u.tabs.Selected().Text; got != "Hosts" {
		t.Errorf("Add a server or protect a host went to %s", got)
	}
}

// noScan is a scanner that finds nothing.
func noScan(context.Context, app.ScanRequest, func(app.Candidate), func(app.ScanProgress)) (app.ScanSummary, error) {
	return app.ScanSummary{}, nil
}
