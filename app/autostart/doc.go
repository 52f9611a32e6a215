// Package autostart owns Rootkeeper's "Start at login" entry: the one file
// (or registry value) each desktop reads at login to start programs.
//
//	Linux, BSD   $XDG_CONFIG_HOME/autostart/rootkeeper.desktop   (XDG Autostart spec)
//	macOS        ~/Library/LaunchAgents/io.rootkeeper.app.plist  (launchd, RunAtLoad)
//	Windows      HKCU\Software\Microsoft\Windows\CurrentVersion\Run, value "Rootkeeper"
//
// Each entry starts this executable with HiddenFlag, so that the app comes up
// in the tray without opening its window. The package writes and removes
// only that entry; it never starts or stops the app, and it imports nothing
// of Rootkeeper's, so both the command line and the window can use it.
package autostart
