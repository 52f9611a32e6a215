//go:build darwin

package autostart

// platform is the LaunchAgent plist launchd reads at login.
func platform() (backend, error) { return launchAgentBackend() }
