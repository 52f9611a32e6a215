package main

// The bridge's process: `rootkeeper bridge NAME`, run by a host, and what
// it knows of the running app (appWatch).

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/control"
	"rootkeeper/app/health"
	"rootkeeper/app/link"
	"rootkeeper/app/logfile"
	"rootkeeper/app/policy"
	"rootkeeper/app/secrets"
	"rootkeeper/mcp/bridge"
	"rootkeeper/mcp/reap"
)

// runBridge is `rootkeeper bridge NAME`: it works from the state file alone
// (watched, with its own access checks), and reports its session to the
// app when one runs. Its log goes to the host's stderr, warnings only: a
// host shows it to the person.
func runBridge(ctx context.Context, store *app.Store, name string, stdin io.Reader, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := reap.BecomeSubreaper(); err != nil {
		logger.Warn("cannot become a child subreaper", "err", err)
	}
	defer reap.EndOrphans(2 * time.Second)
	repairTakenOff(store, logger)
	core, err := app.NewCore(store)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	monitor := health.NewMonitor(core, health.Options{Logger: logger})
	go supervised(ctx, core, logger, "state watcher", core.Run)
	go supervised(ctx, core, logger, "health monitor", monitor.Run)
	// The organisation's policy binds a bridge too, and changes while it
	// runs: applied at once (a folder it never grants leaves the session).
	go supervised(ctx, core, logger, "policy watcher", func(ctx context.Context) error {
		return policy.Watch(ctx, app.Policy(), core.SetPolicy)
	})
	logs, err := logfile.Open(app.ServerLogPath(store.Dir(), name), 0, 0)
	if err != nil {
		logger.Warn("cannot open the server log", "err", err)
	}
	var serverLog io.Writer
	if logs != nil {
		defer logs.Close()
		logs.OnProblem = func(err error) {
			if err != nil {
				logger.Warn("the server's log is not being written; tried again while it runs", "err", err)
			}
		}
		serverLog = logs
	}
	auditLog := audit.NewLog(store.Dir())
	defer func() {
		if err := auditLog.Close(); err != nil {
			logger.Warn("the audit log's last entries were not written", "err", err)
		}
	}()
	watch := newAppWatch(store.Dir(), name)
	// The secrets of every server are sealed when the bridge writes the
	// state (a host's folder becomes a request); where no keyring takes
	// them, the warning names other servers and their variables: it goes
	// to the running app's log (and doctor says it too), not to the host,
	// in place of the command line's warning on stderr.
	store.BeforeSave = (&secrets.Sealer{Warn: watch.warn}).Seal
	go supervised(ctx, core, logger, "session reporter", watch.report)
	return bridge.Run(ctx, bridge.Options{
		Core: core, Server: name,
		HostIn: stdin, HostOut: stdout, Stderr: stderr, Log: serverLog,
		Audit: auditLog, AppRunning: watch.running, CanAsk: watch.canAsk, Logger: logger, StateDir: store.Dir(),
		OnSession: watch.session,
	})
}

// appWatch tells a bridge whether the app runs (until-quit decisions count
// only then) and whether it can ask the person, reports the bridge's
// session to it, and hands it the warnings that are not for the host.
type appWatch struct {
	dir    string
	server string // the bridge's own server

	mu      sync.Mutex
	checked time.Time
	up      bool
	asks    bool
	last    *app.BridgeSession
	changed chan struct{}

	// warnings are for the app's log, not sent yet; wmu is their own
	// lock, never held across a call, so that warn does not wait.
	wmu      sync.Mutex
	warnings []string
}

// bridgeWarning is what a bridge tells the app's log (control op "warn").
type bridgeWarning struct {
	Bridge  string `json:"bridge"`
	Message string `json:"message"`
}

// maxWarnings bounds the warnings a bridge keeps for an app that is not
// running: the oldest go first.
const maxWarnings = 32

func newAppWatch(dir, server string) *appWatch {
	return &appWatch{dir: dir, server: server, changed: make(chan struct{}, 1)}
}

// warn keeps msg for the app's log; report sends it when an app runs. It
// never waits (it is called while the state file is being saved).
func (w *appWatch) warn(msg string) {
	w.wmu.Lock()
	if len(w.warnings) >= maxWarnings {
		w.warnings = w.warnings[1:]
	}
	w.warnings = append(w.warnings, msg)
	w.wmu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// running asks the app's control socket, at most once a second.
func (w *appWatch) running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Since(w.checked) < time.Second {
		return w.up
	}
	w.check()
	return w.up
}

// canAsk asks the app whether a person can be asked (link.OpAsker: the
// app with its window; headless cannot), at most once a second.
func (w *appWatch) canAsk() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Since(w.checked) >= time.Second {
		w.check()
	}
	return w.asks
}

// check asks the app's control socket; w.mu is held.
func (w *appWatch) check() {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	w.up = control.Call(ctx, w.dir, "ping", nil, nil) == nil
	var asker link.Asker
	w.asks = w.up && control.Call(ctx, w.dir, link.OpAsker, nil, &asker) == nil && asker.Person
	w.checked = time.Now()
}

// session notes the bridge's session; report sends it.
func (w *appWatch) session(s app.BridgeSession) {
	w.mu.Lock()
	w.last = &s
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// report sends the session to the running app when it changes and every
// few seconds, until ctx ends.
func (w *appWatch) report(ctx context.Context) error {
	t := time.NewTicker(app.BridgeTimeout / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.changed:
		case <-t.C:
		}
		if !w.running() {
			continue
		}
		w.mu.Lock()
		s := w.last
		w.mu.Unlock()
		w.wmu.Lock()
		warnings := w.warnings
		w.warnings = nil
		w.wmu.Unlock()
		if s != nil {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			control.Call(cctx, w.dir, "bridge", s, nil)
			cancel()
		}
		for len(warnings) > 0 {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			err := control.Call(cctx, w.dir, "warn", bridgeWarning{Bridge: w.server, Message: warnings[0]}, nil)
			cancel()
			if err != nil {
				break
			}
			warnings = warnings[1:]
		}
		if len(warnings) > 0 {
			// Not sent: kept, before those that came meanwhile.
			w.wmu.Lock()
			w.warnings = append(warnings, w.warnings...)
			if n := len(w.warnings); n > maxWarnings {
				w.warnings = w.warnings[n-maxWarnings:]
			}
			w.wmu.Unlock()
		}
	}
}
