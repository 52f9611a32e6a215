// Package assets holds Rootkeeper's icons, embedded in the binary.
//
// The PNGs are drawn by gen/main.go; after changing it, run
// `go generate ./assets` and commit the new images.
package assets

//go:generate go run gen/main.go

import (
	_ "embed"

	"fyne.io/fyne/v2"
)

var (
	//go:embed icon.png
	iconPNG []byte
	//go:embed tray.png
	trayPNG []byte
	//go:embed tray-paused.png
	trayPausedPNG []byte
)

// Icon is the 256×256 application and window icon.
var Icon = fyne.NewStaticResource("icon.png", iconPNG)

// Tray is the tray icon while folders are being shared.
var Tray = fyne.NewStaticResource("tray.png", trayPNG)

// TrayPaused is the tray icon while sharing is paused.
var TrayPaused = fyne.NewStaticResource("tray-paused.png", trayPausedPNG)
