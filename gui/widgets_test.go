package gui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// A path too long for its label keeps its start and its last folder and
// leaves out the middle ("~/src/…/payments-api"), instead of losing its
// end; the whole path is what the tooltip shows.
func TestPathLabelCutsInTheMiddle(t *testing.T) {
	test.NewTempApp(t)
	const path = "/home/ada/src/work/clients/acme/payments-api"
	l := newPathLabel("")
	l.setPath(path, "/home/ada")
	fits := func(s string) float32 {
		return fyne.MeasureText(s, theme.TextSize(), l.TextStyle).Width + 2*theme.InnerPadding()
	}

	l.Resize(fyne.NewSize(fits("~/src/…/payments-api")+1, 30))
	if l.Text != "~/src/…/payments-api" {
		t.Errorf("narrow: %q, want ~/src/…/payments-api", l.Text)
	}
	if l.full != path || !l.cut() {
		t.Errorf("tooltip %q (shown: %v), want the whole path", l.full, l.cut())
	}

	l.Resize(fyne.NewSize(fits("~/src/work/clients/acme/payments-api")+1, 30))
	if l.Text != "~/src/work/clients/acme/payments-api" {
		t.Errorf("wide: %q, want all of it from ~", l.Text)
	}

	// Narrower than the last folder's name: its start and end, never a
	// text wider than the label.
	l.Resize(fyne.NewSize(fits("payments"), 30))
	if !strings.Contains(l.Text, "…") || fits(l.Text) > l.Size().Width {
		t.Errorf("very narrow: %q (%v wide in %v)", l.Text, fits(l.Text), l.Size().Width)
	}

	// setText (a sentence, not a path) is left to the end ellipsis again.
	l.setText("Seen by fs", "Seen by fs")
	l.Resize(fyne.NewSize(400, 30))
	if l.Text != "Seen by fs" {
		t.Errorf("after setText: %q", l.Text)
	}
	// and a path set again after it is drawn again, at the same width.
	l.setPath(path, "/home/ada")
	if l.Text != "~/src/work/clients/acme/payments-api" {
		t.Errorf("setPath after setText: %q", l.Text)
	}
}

// BenchmarkPathLabelFit is the cost of fitting a long path to a new width,
// which every visible row of the Roots tab pays on a resize.
func BenchmarkPathLabelFit(b *testing.B) {
	test.NewTempApp(b)
	l := newPathLabel("")
	l.setPath("/home/ada/src/work/clients/acme/backend/services/payments-api", "/home/ada")
	for i := 0; b.Loop(); i++ {
		l.Resize(fyne.NewSize(float32(120+i%200), 30))
	}
}
