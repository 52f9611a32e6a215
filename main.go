// Command rootkeeper decides which folders of this machine each MCP server
// may see. With no verb it opens the window and the tray icon; `rootkeeper
// --help` lists the verbs.
//
// This file only wires the parts together: the command line (app/cli), the
// domain hub (app), the project scanner (detect), root health (app/health),
// the MCP clients (mcp) and the GUI (gui).
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/budget"
	"rootkeeper/app/cli"
	"rootkeeper/app/control"
	"rootkeeper/app/health"
	"rootkeeper/app/hosts"
	"rootkeeper/app/link"
	"rootkeeper/app/policy"
	"rootkeeper/app/serverentry"
	"rootkeeper/app/supervise"
	"rootkeeper/app/words"
	"rootkeeper/detect"
	"rootkeeper/gui/initlog"
	"rootkeeper/mcp"
	"rootkeeper/mcp/confine"
	"rootkeeper/mcp/reap"
)

// began is when this process started, near enough: the window logs how
// long after it was first drawn.
var began = time.Now()

// fyneApp is the metadata `fyne package` builds the bundle from; the
// version --version prints is read from it, so there is one copy.
//
//go:embed FyneApp.toml
var fyneApp []byte

func main() {
	initlog.Release()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if v, err := cli.VersionFromFyneApp(fyneApp); err == nil {
		app.Version = v
	}
	// Confined servers are started through `rootkeeper __confine`, which
	// package confine answers in its init, before main runs.
	cli.Landlock = confine.ABI
	cli.LandlockKernel = confine.KernelABI
	cli.NetworkIsolation = confine.Isolation
	// The organisation's policy, from the system's place only: every
	// process (a command, a bridge, the app) decides under it.
	app.SetPolicy(policy.Load())
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	code := cli.Run(ctx, os.Args[1:], cli.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Cwd: cwd, Home: home,
	}, cli.Extensions{
		Scan:                 scan,
		DefaultSearchFolders: detect.DefaultSearchFolders,
		GUI:                  runGUI,
		GUIHidden:            runGUIHidden,
		Headless:             runHeadless,
		Window:               runWindow,
		Audit:                audit.RunCommand,
		Bridge:               runBridge,
	})
	stop()
	os.Exit(code)
}

// scan adapts a detect.Scanner to app.Scanner; the two packages share the shape
// of their types so that the conversions are free.
func scan(ctx context.Context, req app.ScanRequest, found func(app.Candidate), progress func(app.ScanProgress)) (app.ScanSummary, error) {
	return scanWith(ctx, &detect.Scanner{JSONC: serverentry.Standardize}, req, found, progress)
}

func scanWith(ctx context.Context, s *detect.Scanner, req app.ScanRequest, found func(app.Candidate), progress func(app.ScanProgress)) (app.ScanSummary, error) {
	sum, err := s.Scan(ctx, detect.Request(req),
		func(c detect.Candidate) { found(app.Candidate(c)) },
		func(p detect.Progress) { progress(app.ScanProgress(p)) })
	return app.ScanSummary(sum), err
}

// rescan is scan for a window whose scans repeat (the Discover tab's Scan):
// they share a re-scan cache in memory, so that a scan after the first reads
// only the folders changed since.
func rescan() app.Scanner {
	s := &detect.Scanner{Cache: detect.NewCache(), JSONC: serverentry.Standardize}
	return func(ctx context.Context, req app.ScanRequest, found func(app.Candidate), progress func(app.ScanProgress)) (app.ScanSummary, error) {
		return scanWith(ctx, s, req, found, progress)
	}
}

// services is everything the long-running app runs besides the GUI.
type services struct {
	core    *app.Core
	manager *mcp.Manager
	control *control.Server
	wg      sync.WaitGroup
	// hub is the window's hub, once the app with its window has one.
	hub atomic.Pointer[link.Hub]
	// startMCP starts the MCP clients when start was asked to hold them
	// (the window starts them once it is up); it does nothing after the
	// first call.
	startMCP func()
}

// start opens the core, forgets last run's until-quit decisions, and starts
// the state watcher, the health monitor, the MCP clients and the control
// socket, all bound to ctx.
//
// With withPerson (the app with its tray and window, not headless) a
// person can be asked: the MCP clients wait for rt.startMCP, which the app
// calls once its sampling reviewer is in place, and a confined server's
// call past its folders waits for the person's answer.
func start(ctx context.Context, store *app.Store, logger *slog.Logger, withPerson bool) (*services, error) {
	// Descendants that leave a server's process group come back to us, to
	// be ended at shutdown (see stopAll).
	if err := reap.BecomeSubreaper(); err != nil {
		logger.Warn("cannot become a child subreaper; a server's escaped children may outlive the app", "err", err)
	}
	ctl, err := control.Listen(store.Dir())
	if err != nil {
		return nil, err
	}
	repairTakenOff(store, logger)
	core, err := openCore(store, logger)
	if err != nil {
		return nil, err
	}
	rt := &services{core: core, control: ctl}
	opts := mcp.Options{StateDir: store.Dir(), Logger: logger}
	if withPerson {
		// The hub brings the window up for a request (link.Hub.Run), unless
		// the window cannot come up.
		opts.CanAsk = func() bool {
			h := rt.hub.Load()
			return h == nil || h.CanAsk()
		}
	}
	rt.manager = mcp.NewManager(core, opts)
	monitor := health.NewMonitor(core, health.Options{Logger: logger})
	rt.answerControl(store, logger, monitor)
	rt.startLoops(ctx, store, logger, monitor)
	rt.startMCP = sync.OnceFunc(func() { rt.supervise(ctx, logger, "mcp clients", rt.manager.Run) })
	if !withPerson {
		rt.startMCP()
	}
	return rt, nil
}

// openCore opens the core on store, logs that the state file was found
// corrupt (and moved aside) if it was, and forgets last run's until-quit
// decisions.
func openCore(store *app.Store, logger *slog.Logger) (*app.Core, error) {
	core, err := app.NewCore(store)
	if err != nil {
		return nil, err
	}
	if n := core.Snapshot().Notices[app.NoticeCorrupt]; n != "" {
		logger.Warn(n)
	}
	if err := core.DropUntilQuit(); err != nil {
		return nil, err
	}
	return core, nil
}

// answerControl answers on the control socket what other rootkeeper
// processes ask the running app: `status`, a server's resources, the
// sessions and warnings of bridges started by hosts, and a root's check
// by monitor.
func (rt *services) answerControl(store *app.Store, logger *slog.Logger, monitor *health.Monitor) {
	core, ctl := rt.core, rt.control
	ctl.Handle("status", func(context.Context, json.RawMessage) (any, error) {
		return cli.BuildStatus(core.Snapshot(), true, store.Dir()), nil
	})
	ctl.Handle("resources", cli.ResourcesHandler(rt.manager))
	// Bridges started by hosts report their sessions here, every few
	// seconds while they run.
	ctl.Handle("bridge", func(_ context.Context, args json.RawMessage) (any, error) {
		var s app.BridgeSession
		if err := json.Unmarshal(args, &s); err != nil {
			return nil, err
		}
		core.SeenBridge(s)
		return "ok", nil
	})
	// Bridges speak only of their own server on their stderr, which is
	// their host's: what they have to say of others comes here, to the
	// app's log.
	ctl.Handle("warn", func(_ context.Context, args json.RawMessage) (any, error) {
		var w bridgeWarning
		if err := json.Unmarshal(args, &w); err != nil {
			return nil, err
		}
		logger.Warn(words.SafeText(w.Message), "from", "bridge "+words.SafeText(w.Bridge))
		return "ok", nil
	})
	// The window's "Check again" and `roots check`.
	ctl.Handle(cli.OpCheck, cli.CheckHandler(monitor))
}

// startLoops starts, supervised until ctx ends, the app's background
// loops but the MCP clients: the policy watcher, the state watcher, the
// health monitor, the control channel, the state folder's budget, the
// bridges' expiry and the hosts' files watcher.
func (rt *services) startLoops(ctx context.Context, store *app.Store, logger *slog.Logger, monitor *health.Monitor) {
	core := rt.core
	loop := func(name string, run func(context.Context) error) { rt.supervise(ctx, logger, name, run) }
	// The policy changes while the app runs: applied at once.
	loop("policy watcher", func(ctx context.Context) error {
		return policy.Watch(ctx, app.Policy(), func(p policy.Policy) {
			logger.Info("the organisation's policy changed", "source", p.Source, "broken", p.Broken)
			core.SetPolicy(p)
		})
	})
	for name, run := range map[string]func(context.Context) error{
		"state watcher":       core.Run,
		"health monitor":      monitor.Run,
		"control channel":     rt.control.Serve,
		"state folder budget": func(ctx context.Context) error { return keepBudget(ctx, store, core, logger) },
		"bridge expiry":       func(ctx context.Context) error { return expireBridges(ctx, core) },
		"network records":     core.RunNetwork,
	} {
		loop(name, run)
	}
	// Protected hosts' files: a host writing its own entries back is told
	// about, and protected again where the person asked (--keep).
	loop("hosts watcher", func(ctx context.Context) error {
		return cli.WatchHosts(ctx, store, core.SetNotice, func(msg string) { logger.Info(msg) })
	})
}

// noticeBudget is the topic of the notice that says the state folder went
// over its budget and what was freed.
const noticeBudget = "state folder budget"

// keepBudget keeps the state folder's size within a budget until ctx
// ends: a confined server's temp folder lives there and holds whatever it
// writes. A trim is logged and told in a notice.
func keepBudget(ctx context.Context, store *app.Store, core *app.Core, logger *slog.Logger) error {
	return budget.Run(ctx, store.Dir(), budget.Options{OnTrim: func(r budget.Report) {
		if r.Trimmed() {
			logger.Warn(r.String())
			core.SetNotice(noticeBudget, r.String())
		} else {
			core.SetNotice(noticeBudget, "")
		}
	}})
}

// expireBridges forgets, until ctx ends, the bridge sessions gone quiet:
// bridges report every few seconds.
func expireBridges(ctx context.Context, core *app.Core) error {
	t := time.NewTicker(app.BridgeTimeout / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			core.ExpireBridges(now.Add(-app.BridgeTimeout))
		}
	}
}

// supervise runs one background loop of the app under supervised, until
// ctx ends; stopAll waits for it.
func (rt *services) supervise(ctx context.Context, logger *slog.Logger, name string, run func(context.Context) error) {
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		supervised(ctx, rt.core, logger, name, run)
	}()
}

// supervised runs one background loop of the app until ctx ends, restarting
// it with backoff when it fails, and says so in the window and `status`
// (notice "loop:NAME") until it has run well again. A loop that silently
// stayed dead would leave, say, a deleted folder "ok".
func supervised(ctx context.Context, core *app.Core, logger *slog.Logger, name string, run func(context.Context) error) {
	topic := "loop:" + name
	supervise.Run(ctx, run, supervise.Options{
		OnFail: func(err error, failures int, next time.Duration) {
			logger.Error(name+" stopped; restarting it", "err", err, "failures", failures, "in", next)
			core.SetNotice(topic, fmt.Sprintf("the %s stopped (%v); restarting it (attempt %d)", name, firstLine(err), failures))
		},
		OnRecover: func() { core.SetNotice(topic, "") },
	})
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func newLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func runHeadless(ctx context.Context, store *app.Store) error {
	logger := newLogger()
	rt, err := start(ctx, store, logger, false)
	if err != nil {
		return err
	}
	logger.Info("rootkeeper running headless", "state", store.Dir())
	<-ctx.Done()
	logger.Info("shutting down")
	rt.stopAll(logger)
	return nil
}

// stopAll waits for every loop to end (the servers are stopped by then) and
// ends what they left behind: descendants that escaped their process group.
func (rt *services) stopAll(logger *slog.Logger) {
	rt.wg.Wait()
	// Decisions scoped until quit end now, for bridges that outlive the
	// app too.
	if err := rt.core.DropUntilQuit(); err != nil {
		logger.Warn("cannot end the until-quit decisions", "err", err)
	}
	if n := reap.EndOrphans(2 * time.Second); n > 0 {
		logger.Info("ended processes the servers left behind", "count", n)
	}
}

// repairTakenOff puts back the folders an earlier Rootkeeper took off the
// configurations of the servers it protected, before any server starts;
// a server it cannot repair stays held, saying which folder it lost.
func repairTakenOff(store *app.Store, logger *slog.Logger) {
	home, _ := os.UserHomeDir()
	repaired, err := hosts.RepairTakenOff(store, home)
	if err != nil {
		logger.Warn("cannot put back the folders an earlier version took off servers' command lines", "err", err)
	}
	if len(repaired) > 0 {
		logger.Info("put the folders an earlier version took off back on these servers' command lines, from the hosts' backups", "servers", repaired)
	}
}
