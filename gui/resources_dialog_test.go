package gui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
)

// fakeResources stands in for the MCP manager: fixed resources of one
// server, reads counted, and OnResourceEvent listeners the test can fire.
type fakeResources struct {
	mu        sync.Mutex
	list      []app.ResourceInfo
	texts     map[string]string
	lists     int
	reads     []string
	listeners []func(server, uri string)
}

func newFakeResources() *fakeResources {
	return &fakeResources{
		list: []app.ResourceInfo{
			{URI: "demo://readme", Name: "README.md", MIMEType: "text/markdown"},
			{URI: "demo://big", Name: "big.txt", MIMEType: "text/plain"},
			{URI: "demo://logo", Name: "logo", MIMEType: "image/png"},
		},
		texts: map[string]string{
			"demo://readme": "# Hello\nfrom the server\n",
			"demo://big":    strings.Repeat("é", 200_000), // 400,000 bytes
		},
	}
}

func (f *fakeResources) ListResources(_ context.Context, server string) ([]app.ResourceInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	if server != "docs" {
		return nil, errors.New(`server "` + server + `" is not connected`)
	}
	return append([]app.ResourceInfo(nil), f.list...), nil
}

func (f *fakeResources) ReadResource(_ context.Context, server, uri string) ([]app.ResourceContent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, uri)
	if uri == "demo://logo" {
		return []app.ResourceContent{{URI: uri, MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}}}, nil
	}
	text, ok := f.texts[uri]
	if !ok {
		return nil, errors.New(`server "docs": resources/read ` + uri + `: Resource not found`)
	}
	return []app.ResourceContent{{URI: uri, MIMEType: "text/plain", Text: text}}, nil
}

func (f *fakeResources) OnResourceEvent(fn func(server, uri string)) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listeners = append(f.listeners, fn)
	i := len(f.listeners) - 1
	return func() { f.mu.Lock(); f.listeners[i] = nil; f.mu.Unlock() }
}

func (f *fakeResources) fire(server, uri string) {
	f.mu.Lock()
	ls := append([]func(string, string){}, f.listeners...)
	f.mu.Unlock()
	for _, fn := range ls {
		if fn != nil {
			fn(server, uri)
		}
	}
}

// findButton finds the button labelled text in o, nil if none.
func findButton(o fyne.CanvasObject, text string) *widget.Button {
	switch w := o.(type) {
	case *widget.Button:
		if w.Text == text {
			return w
		}
	case *fyne.Container:
		for _, c := range w.Objects {
			if b := findButton(c, text); b != nil {
				return b
			}
		}
	case fyne.Widget:
		r := test.WidgetRenderer(w)
		for _, c := range r.Objects() {
			if b := findButton(c, text); b != nil {
				return b
			}
		}
	}
	return nil
}

func TestResourcesButtonOnlyForConnectedServers(t *testing.T) {
	fr := newFakeResources()
	f := newFixture(t, Options{Resources: fr}, func(s *app.State) error {
		if err := s.AddServer(stdio("docs")); err != nil {
			return err
		}
		return nil
	})
	f.u.selectTab("Servers")
	if findButton(f.u.servers.content, "Resources…") != nil {
		t.Fatal("a server that is not connected has a Resources… button")
	}
	f.connect("docs")
	b := findButton(f.u.servers.content, "Resources…")
	if b == nil {
		t.Fatal("the connected server has no Resources… button")
	}
	test.Tap(b)
	if fr.lists != 1 {
		t.Errorf("opening the dialog listed %d times, want 1", fr.lists)
	}

	// Without a browser there is no button at all.
	g := newFixture(t, Options{}, func(s *app.State) error { return s.AddServer(stdio("docs")) })
	g.connect("docs")
	if findButton(g.u.servers.content, "Resources…") != nil {
		t.Error("Resources… shown without Options.Resources")
	}
}

func TestResourcesDialogListsFiltersAndReads(t *testing.T) {
	fr := newFakeResources()
	f := newFixture(t, Options{Resources: fr}, nil)
	d := newResourcesDialog(f.u, "docs", fr)
	d.Show(f.win)

	if len(d.shown) != 3 || d.list.Length() != 3 {
		t.Fatalf("listed %d, want 3", d.list.Length())
	}
	if got := d.status.Text; got != "3 resources. Select one to read it." {
		t.Errorf("status %q", got)
	}
	test.Type(d.filter, "PNG")
	if len(d.shown) != 1 || d.shown[0].URI != "demo://logo" {
		t.Fatalf("filter PNG shows %+v", d.shown)
	}
	if got := d.status.Text; got != "1 of 3 resources match." {
		t.Errorf("status %q", got)
	}
	d.list.Select(0)
	if got := d.content.Text(); got != "binary, 4 bytes, image/png\n" {
		t.Errorf("blob shown as %q", got)
	}

	d.filter.SetText("")
	d.list.Select(0) // README.md
	if got := d.content.Text(); got != "# Hello\nfrom the server\n" {
		t.Errorf("text shown as %q", got)
	}
	if d.note.Text != "" {
		t.Errorf("note %q for a short text", d.note.Text)
	}

	d.list.Select(1) // big.txt: 400,000 bytes
	shown := d.content.Text()
	if len(shown) > maxShownText || len(shown) < maxShownText-1 || !strings.HasPrefix(fr.texts["demo://big"], shown) {
		t.Errorf("big text shown as %d bytes, want the first %d", len(shown), maxShownText)
	}
	if !strings.Contains(d.note.Text, "first 256 KiB of 400000 bytes") {
		t.Errorf("no truncation note: %q", d.note.Text)
	}

	// An update of the resource shown reads it again; of another, not.
	reads := len(fr.reads)
	fr.texts["demo://big"] = "smaller now"
	fr.fire("docs", "demo://readme")
	fr.fire("other", "demo://big")
	if len(fr.reads) != reads {
		t.Errorf("events for other resources read %q", fr.reads[reads:])
	}
	fr.fire("docs", "demo://big")
	if got := d.content.Text(); got != "smaller now" || d.note.Text != "" {
		t.Errorf("after the update: %q, note %q", got, d.note.Text)
	}

	// A list change reloads the list.
	fr.list = append(fr.list, app.ResourceInfo{URI: "demo://new", Name: "new"})
	fr.fire("docs", "")
	if d.list.Length() != 4 {
		t.Errorf("after list_changed: %d resources, want 4", d.list.Length())
	}

	// A failed read says why.
	delete(fr.texts, "demo://readme")
	d.list.Select(0)
	if !strings.Contains(d.status.Text, "Could not read demo://readme") || !strings.Contains(d.status.Text, "not found") || d.content.Text() != "" {
		t.Errorf("failed read: status %q, content %q", d.status.Text, d.content.Text())
	}

	// Closed, it hears nothing more.
	d.dlg.Hide()
	lists := fr.lists
	fr.fire("docs", "")
	if fr.lists != lists {
		t.Error("a closed dialog reloaded its list")
	}
}

func TestResourcesDialogListError(t *testing.T) {
	fr := newFakeResources()
	f := newFixture(t, Options{Resources: fr}, nil)
	d := newResourcesDialog(f.u, "gone", fr)
	d.Show(f.win)
	if !strings.Contains(d.status.Text, `Could not list the resources: server "gone" is not connected`) || d.list.Length() != 0 {
		t.Errorf("status %q, %d listed", d.status.Text, d.list.Length())
	}
}

// ctxRecorder remembers the context of each list.
type ctxRecorder struct {
	*fakeResources
	ctxs []context.Context
}

func (c *ctxRecorder) ListResources(ctx context.Context, server string) ([]app.ResourceInfo, error) {
	c.ctxs = append(c.ctxs, ctx)
	return c.fakeResources.ListResources(ctx, server)
}

// A storm of list_changed while a list is in flight makes one more list
// when it ends, not one per event; closing the dialog cancels what is in
// flight.
func TestResourcesDialogFoldsListChangedStorms(t *testing.T) {
	fr := &ctxRecorder{fakeResources: newFakeResources()}
	f := newFixture(t, Options{Resources: fr}, nil)
	var pending []func()
	f.u.async = func(fn func()) { pending = append(pending, fn) } // held until the test runs them
	d := newResourcesDialog(f.u, "docs", fr)
	d.Show(f.win)
	for range 100 {
		fr.fire("docs", "")
	}
	if len(pending) != 1 {
		t.Fatalf("%d lists started while one was in flight, want 1", len(pending))
	}
	pending[0]() // the first list ends: one more starts
	if len(pending) != 2 {
		t.Fatalf("after the storm, %d lists in all, want 2", len(pending))
	}
	pending[1]()
	if fr.lists != 2 || len(d.all) != 3 {
		t.Fatalf("lists %d, shown %d", fr.lists, len(d.all))
	}
	fr.fire("docs", "") // a third list starts, and is in flight when the dialog closes
	d.dlg.Hide()
	pending[2]()
	if len(fr.ctxs) != 3 || fr.ctxs[2].Err() == nil {
		t.Fatalf("the list in flight when the dialog closed was not cancelled (%d lists)", len(fr.ctxs))
	}
}
