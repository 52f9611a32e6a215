// Command hello is the smallest Fyne window, the anchor the app's memory
// and idle cost are measured against (gui's BenchmarkAtScale).
package main

import (
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/widget"
)

func main() {
	a := app.NewWithID("io.rootkeeper.hello")
	w := a.NewWindow("Hello")
	w.SetContent(widget.NewLabel("Hello, world"))
	w.ShowAndRun()
}
