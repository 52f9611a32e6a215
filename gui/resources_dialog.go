package gui

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// maxShownText is how much of a text resource the dialog shows.
const maxShownText = 256 << 10

// resourcesTimeout bounds one list or read.
const resourcesTimeout = 30 * time.Second

// resourcesDialog lists one server's resources (filter box; name, URI,
// MIME) and shows the one selected: text in a monospace scroll, cut at
// maxShownText; blobs as their size and MIME. Every list and read runs
// through u.async and comes back through u.do. When Browser is also an
// app.ResourceWatcher, a list_changed from the server reloads the list and
// an update of the resource shown reads it again.
type resourcesDialog struct {
	Server  string
	Browser app.ResourceBrowser

	u        *ui
	all      []app.ResourceInfo
	shown    []app.ResourceInfo
	selected string // URI on display, "" when none
	listSeq  int    // the latest list request; older answers are dropped
	readSeq  int    // the latest read request
	// A list in flight is not started again: changes that arrive meanwhile
	// make one more list when it ends (relist), however many they are. The
	// requests in flight are cancelled when the dialog closes (and a read
	// when another starts).
	listing    bool
	relist     bool
	listCancel context.CancelFunc
	readCancel context.CancelFunc

	filter  *widget.Entry
	list    *widget.List
	status  *widget.Label
	content *widget.TextGrid
	note    *widget.Label
	refresh *widget.Button
	dlg     *dialog.CustomDialog
	stop    func()
}

func newResourcesDialog(u *ui, server string, b app.ResourceBrowser) *resourcesDialog {
	return &resourcesDialog{u: u, Server: server, Browser: b}
}

func (d *resourcesDialog) build() fyne.CanvasObject {
	d.filter = widget.NewEntry()
	d.filter.SetPlaceHolder("Filter by name, URI or MIME type")
	d.filter.OnChanged = func(string) { d.applyFilter() }
	d.list = widget.NewList(
		func() int { return len(d.shown) },
		func() fyne.CanvasObject {
			name := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			name.Truncation = fyne.TextTruncateEllipsis
			detail := widget.NewLabel("")
			detail.Truncation = fyne.TextTruncateEllipsis
			detail.SizeName = theme.SizeNameCaptionText
			return container.NewVBox(name, detail)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			r := d.shown[i]
			box := o.(*fyne.Container)
			box.Objects[0].(*widget.Label).SetText(words.SafeText(resourceTitle(r)))
			box.Objects[1].(*widget.Label).SetText(words.SafeText(r.URI + "  ·  " + orNone(r.MIMEType)))
		})
	d.list.OnSelected = func(i widget.ListItemID) {
		if i >= 0 && i < len(d.shown) {
			d.read(d.shown[i].URI)
		}
	}
	d.status = widget.NewLabel("Loading the list…")
	d.status.Truncation = fyne.TextTruncateEllipsis
	d.content = widget.NewTextGrid()
	d.note = widget.NewLabel("")
	d.note.TextStyle.Italic = true
	d.note.Wrapping = fyne.TextWrapWord
	d.refresh = widget.NewButtonWithIcon("Reload", theme.ViewRefreshIcon(), d.load)

	left := container.NewBorder(d.filter, nil, nil, nil, d.list)
	scroll := container.NewScroll(d.content)
	right := container.NewBorder(nil, d.note, nil, nil, scroll)
	split := container.NewHSplit(left, right)
	split.Offset = 0.4
	return container.NewBorder(nil, container.NewBorder(nil, nil, nil, d.refresh, d.status), nil, nil, split)
}

// Show opens the dialog over parent and starts loading the list.
func (d *resourcesDialog) Show(parent fyne.Window) {
	d.dlg = newInfo(nil, personName(d.Server)+": resources", d.build(), "Close", parent)
	d.dlg.Resize(fyne.NewSize(900, 560))
	if w, ok := d.Browser.(app.ResourceWatcher); ok {
		d.stop = w.OnResourceEvent(func(server, uri string) {
			if server != d.Server {
				return
			}
			d.u.do(func() { d.changed(uri) })
		})
	}
	d.dlg.SetOnClosed(func() {
		if d.stop != nil {
			d.stop()
			d.stop = nil
		}
		for _, cancel := range []context.CancelFunc{d.listCancel, d.readCancel} {
			if cancel != nil {
				cancel()
			}
		}
	})
	d.dlg.Show()
	d.load()
}

// changed follows a resource event: the list changed (uri empty) or the
// resource uri did. UI goroutine.
func (d *resourcesDialog) changed(uri string) {
	if d.stop == nil {
		return // closed
	}
	if uri == "" {
		d.load()
	} else if uri == d.selected {
		d.read(uri)
	}
}

// load lists the server's resources off the UI goroutine, or, when a list
// is in flight, asks for one more when it ends.
func (d *resourcesDialog) load() {
	if d.listing {
		d.relist = true
		return
	}
	d.listing = true
	d.listSeq++
	seq := d.listSeq
	d.status.SetText("Loading the list…")
	b, server := d.Browser, d.Server
	ctx, cancel := context.WithTimeout(context.Background(), resourcesTimeout)
	d.listCancel = cancel
	d.u.async(func() {
		list, err := b.ListResources(ctx, server)
		d.u.do(func() {
			cancel()
			d.listing = false
			if d.relist && d.stop != nil {
				d.relist = false
				d.load()
				return
			}
			if seq != d.listSeq {
				return
			}
			if err != nil {
				d.status.SetText("Could not list the resources: " + err.Error())
				return
			}
			d.all = list
			d.applyFilter()
		})
	})
}

func (d *resourcesDialog) applyFilter() {
	q := filterQuery(d.filter.Text)
	d.shown = d.shown[:0:0]
	for _, r := range d.all {
		if matches(q, r.Name, r.Title, r.URI, r.MIMEType) {
			d.shown = append(d.shown, r)
		}
	}
	d.list.UnselectAll()
	d.list.Refresh()
	switch {
	case len(d.all) == 0:
		d.status.SetText(d.Server + " offers no resources.")
	case len(d.shown) == len(d.all):
		d.status.SetText(plural(len(d.all), "resource") + ". Select one to read it.")
	default:
		d.status.SetText(fmt.Sprintf("%d of %s match.", len(d.shown), plural(len(d.all), "resource")))
	}
}

// read reads uri off the UI goroutine and shows it.
func (d *resourcesDialog) read(uri string) {
	d.readSeq++
	seq := d.readSeq
	d.selected = uri
	d.status.SetText("Reading " + words.SafeText(uri) + "…")
	b, server := d.Browser, d.Server
	if d.readCancel != nil {
		d.readCancel() // the read it replaces is not wanted any more
	}
	ctx, cancel := context.WithTimeout(context.Background(), resourcesTimeout)
	d.readCancel = cancel
	d.u.async(func() {
		defer cancel()
		contents, err := b.ReadResource(ctx, server, uri)
		d.u.do(func() {
			if seq != d.readSeq {
				return
			}
			if err != nil {
				d.content.SetText("")
				d.note.SetText("")
				d.status.SetText("Could not read " + uri + ": " + err.Error())
				return
			}
			text, note := renderContents(contents)
			d.content.SetText(text)
			d.note.SetText(note)
			d.status.SetText(uri)
		})
	})
}

// renderContents is what the dialog shows of a read: the text parts (cut
// at maxShownText in all), a line for each blob, and a note when text was
// cut.
func renderContents(contents []app.ResourceContent) (text, note string) {
	if len(contents) == 0 {
		return "", "The server returned no content."
	}
	var b strings.Builder
	total := 0
	for i, c := range contents {
		if i > 0 {
			b.WriteString("\n")
		}
		if c.IsBlob() {
			fmt.Fprintf(&b, "binary, %d bytes, %s\n", len(c.Blob), orNone(c.MIMEType))
			continue
		}
		total += len(c.Text)
		room := maxShownText - b.Len()
		if room <= 0 {
			continue
		}
		t := c.Text
		if len(t) > room {
			cut := room
			for cut > 0 && !utf8.RuneStart(t[cut]) {
				cut-- // do not split a character
			}
			t = t[:cut]
		}
		b.WriteString(t)
	}
	if total > maxShownText {
		note = fmt.Sprintf("Showing the first %d KiB of %d bytes of text.", maxShownText>>10, total)
	}
	return b.String(), note
}

func resourceTitle(r app.ResourceInfo) string {
	switch {
	case r.Title != "":
		return r.Title
	case r.Name != "":
		return r.Name
	}
	return r.URI
}

func orNone(s string) string {
	if s == "" {
		return "no MIME type"
	}
	return s
}
