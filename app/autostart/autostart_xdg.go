//go:build !darwin && !windows

package autostart

// platform is the XDG autostart entry: Linux and the BSDs' desktops
// (GNOME, KDE, Xfce, …) all read it.
func platform() (backend, error) { return xdgBackend() }
