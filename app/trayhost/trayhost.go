// Package trayhost tells whether the desktop can show Rootkeeper's tray
// icon. The window asks it before hiding into the tray (package gui), and
// `rootkeeper doctor` asks it for the person; one answer for both.
package trayhost
