package main

// The app's faces: the app with its tray icon and window (openGUI), and
// the window, a process of its own that the app starts on demand
// (spawnWindow, runWindow).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime/debug"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/cli"
	"rootkeeper/app/control"
	"rootkeeper/app/link"
	"rootkeeper/app/trayhost"
	"rootkeeper/gui"
	"rootkeeper/gui/display"
	"rootkeeper/mcp/confine"
)

// runGUI is `rootkeeper`: the app with its window and tray icon.
func runGUI(ctx context.Context, store *app.Store) error { return openGUI(ctx, store, false) }

// runGUIHidden is `rootkeeper --hidden`, what the start-at-login entry
// runs: the app starts in the tray and the window stays closed.
func runGUIHidden(ctx context.Context, store *app.Store) error { return openGUI(ctx, store, true) }

// startupTrimDelay is how long after the servers are started the app
// gives the memory its start used back to the system. Laying out the
// window, loading fonts and every server's handshake leave the Go heap at
// about twice what stays live, and a tray app then idles for hours: the
// runtime would keep that peak as its heap goal until it grew again.
const startupTrimDelay = 10 * time.Second

// openGUI runs the app with its tray icon, the window being a process of
// its own (package link): this process runs the services and the tray
// without a render loop, so that living in the tray costs what headless
// costs; the window comes up when the person opens it or something needs
// them, and is gone when closed. Without a tray host the window is the app:
// closing it quits.
func openGUI(ctx context.Context, store *app.Store, hidden bool) error {
	// A second launch brings the running window forward instead; a hidden
	// one (at login) leaves a running app as it is.
	op := "raise"
	if hidden {
		op = "ping"
	}
	raiseCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	err := control.Call(raiseCtx, store.Dir(), op, nil, nil)
	cancel()
	if err == nil {
		return nil
	}
	ctx, quit := context.WithCancel(ctx)
	defer quit()
	logger := newLogger()
	trayUp := trayhost.Present()
	if !trayUp {
		// The window is the app's only face: where no display can show
		// it, say so before anything starts.
		if err := display.Check(os.Getenv("DISPLAY")); err != nil {
			return err
		}
	}
	// The MCP clients wait until the hub reviews sampling requests.
	rt, err := start(ctx, store, logger, true)
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	var hub *link.Hub
	opts := link.Options{
		Spawn:     spawnWindow(store.Dir(), logger, trayUp, quit, func(err error) { hub.WindowEnded(err) }),
		Servers:   rt.manager,
		Resources: rt.manager,
		OnChange: func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		Quit:   quit,
		Logger: logger,
	}
	if !trayUp {
		// Nothing to come back to: closing the window quits.
		opts.OnDetach = quit
	}
	hub = link.NewHub(rt.core, opts)
	rt.hub.Store(hub)
	hub.Register(rt.control)
	rt.manager.SetReviewer(hub)
	rt.startMCP()
	rt.supervise(ctx, logger, "window link", hub.Run)
	if !hidden || !trayUp {
		hub.Show(link.Show{})
	}
	// Once the servers have connected, the start's garbage goes back.
	time.AfterFunc(startupTrimDelay, debug.FreeOSMemory)
	if trayUp {
		home, _ := os.UserHomeDir()
		gui.RunTray(ctx, gui.TrayOptions{
			Core: rt.core, Show: hub.Show, Finding: hub.Finding, Changed: changed, Quit: quit, Home: home,
		})
	} else {
		<-ctx.Done()
	}
	quit()
	rt.stopAll(logger)
	return nil
}

// spawnWindow starts the window process: this binary's window verb, with
// this process's environment (the display, the state folder); ended is
// told when it ends. Without a tray, a window that fails quits the app,
// which has no other face.
func spawnWindow(stateDir string, logger *slog.Logger, trayUp bool, quit func(), ended func(error)) func() error {
	return func() error {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		cmd := exec.Command(self, "--state-dir", stateDir, cli.WindowVerb)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() {
			err := cmd.Wait()
			ended(err)
			if err != nil {
				logger.Warn("the window ended", "err", err)
				if !trayUp {
					quit()
				}
			}
		}()
		return nil
	}
}

// runWindow is the window process: a core of its own over the state file,
// the running app's live view mirrored into it (package link), and the
// window, until the person closes it or the app quits.
func runWindow(ctx context.Context, store *app.Store) error {
	if err := display.Check(os.Getenv("DISPLAY")); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	core, err := app.NewCore(store)
	if err != nil {
		return err
	}
	w, err := link.Attach(ctx, store.Dir(), core)
	switch {
	case errors.Is(err, link.ErrBusy):
		return nil // the open window came forward instead
	case errors.Is(err, control.ErrNotRunning):
		return errors.New("no running Rootkeeper to open the window of; start it with `rootkeeper`")
	case err != nil:
		return err
	}
	go core.Run(ctx)        // the state file, as the running app writes it
	go core.RunNetwork(ctx) // what servers reached, as the app and bridges record it
	go func() {
		// The app quit: the window goes with it.
		if err := w.Run(ctx); err != nil {
			newLogger().Info("closing the window", "reason", err)
		}
		cancel()
	}()
	home, _ := os.UserHomeDir()
	err = gui.Run(gui.Options{
		Context:   ctx,
		Core:      core,
		Scan:      rescan(),
		Servers:   w,
		Resources: w,
		Health:    w,
		StateDir:  store.Dir(),
		Home:      home,
		// The window reviews sampling requests while it is up; the app
		// brings one up for a request that arrives while none is.
		SetReviewer: w.SetReviewer,
		// The Confine switch of each card, and why it is off where
		// Landlock is missing.
		Landlock:       confine.ABI,
		LandlockKernel: confine.KernelABI,
		Isolation:      confine.Isolation,
		Shows:          w.Shows(),
		Later:          w.Later(),
		OnLater:        w.SetLater,
		OnFinding:      w.SetFinding,
		QuitApp:        w.QuitApp,
		Log:            newLogger(),
		Began:          began,
	})
	if err != nil {
		return fmt.Errorf("gui: %w", err)
	}
	return nil
}
