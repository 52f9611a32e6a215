package gui

import "rootkeeper/app/trayhost"

// trayHostPresent reports whether the desktop can show the tray icon; the
// answer is package trayhost's, which `rootkeeper doctor` gives too.
var trayHostPresent = trayhost.Present
