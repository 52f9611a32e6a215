package mcp

// How a server is reached: the stdio command (StdioCommand, shared with the
// bridge), streamable HTTP and SSE with their headers and bounds.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/secrets"
	"rootkeeper/mcp/confine"
)

// transport makes the server's transport. For stdio it also returns the
// process, whose pid is known once the transport has connected.
func (a *adapter) transport(ctx context.Context) (sdk.Transport, *process, error) {
	// Secrets the state file refers to come out of the keyring now.
	srv, hider, err := secrets.ResolveHiding(a.cfg)
	if err != nil {
		return nil, nil, err
	}
	a.hider.Store(hider)
	if a.m.opts.NewTransport != nil {
		t, err := a.m.opts.NewTransport(srv)
		if err != nil {
			return nil, nil, err
		}
		return &refusingTransport{inner: t}, nil, nil
	}
	switch srv.Type {
	case app.TransportStdio:
		snap := a.m.core.Snapshot()
		cmd, paths := StdioCommand(srv, snap)
		cmd.Stderr = hider.Writer(a.stderrWriter())
		// Let Wait return even if a grandchild keeps stderr open.
		cmd.WaitDelay = a.m.opts.StopGrace + a.m.opts.KillAfter + time.Second
		proc := newProcess()
		if a.mode == app.RootsArgs || a.mode == app.RootsEnv {
			a.mu.Lock()
			a.startedWith = paths
			a.mu.Unlock()
			a.recordStartRoots(paths)
		}
		var obs *observed
		var wit *RunWitness
		if srv.Confine {
			o, err := a.confineCommand(cmd, snap)
			switch {
			case err == nil:
				obs, wit = o, NewRunWitness()
				wit.Home = EnvHome(cmd.Env)
				if obs != nil { // nil: not observed (Options.WithoutReach)
					obs.witness = wit
				}
				// What it says, secrets hidden, tells why it stopped
				// confined.
				cmd.Stderr = hider.Writer(io.MultiWriter(a.stderrWriter(), wit))
			case app.RunsUnconfinedHere(srv, errors.Is(err, confine.ErrUnavailable)):
				// Confined by default where Landlock is missing: it runs
				// as it would without Rootkeeper, and says so.
				a.m.log.Warn("Landlock is missing here: the server runs unconfined", "server", srv.Name, "why", err)
			default:
				return nil, nil, err
			}
		}
		a.mu.Lock()
		a.witness = wit
		a.mu.Unlock()
		return &refusingTransport{inner: &stdioTransport{
			cmd:       cmd,
			terminate: a.m.opts.StopGrace,
			version:   a.negotiated,
			proc:      proc,
			obs:       obs,
			backlog:   a.m.opts.Backlog,
			roots:     a.answerWire,
		}}, proc, nil
	case app.TransportHTTP:
		hc := httpClient(srv.URL, srv.Headers)
		hc.Transport = &refusingRoundTripper{base: hc.Transport}
		return &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc}, nil, nil
	case app.TransportSSE:
		// The SSE stream lives on the context given to Connect, so give it
		// the adapter's, not the handshake's.
		return &refusingTransport{inner: &longLived{ctx: ctx, inner: &sdk.SSEClientTransport{Endpoint: srv.URL, HTTPClient: httpClient(srv.URL, srv.Headers)}}}, nil, nil
	}
	return nil, nil, fmt.Errorf("server %q: unknown transport type %q", srv.Name, srv.Type)
}

// StdioCommand is the command that starts stdio server srv under snap: its
// command, arguments and working folder; the environment of app.ServerEnv;
// in roots mode args or env, the visible paths (returned too) appended to
// the arguments or in ROOTKEEPER_ROOTS; its own process group, and on Linux
// the parent-death signal. The managed clients and the bridge start servers
// with it, and with StartServer (on Windows, in a job object).
func StdioCommand(srv app.Server, snap *app.Snapshot) (*exec.Cmd, []string) {
	args := slices.Clone(srv.Args)
	env := srv.Env
	var paths []string
	switch srv.Mode() {
	case app.RootsArgs, app.RootsEnv:
		paths = app.VisiblePaths(snap, srv.Name)
		if srv.Mode() == app.RootsArgs {
			// A folder already on its command line (a slot) is not
			// given twice.
			for _, p := range paths {
				if !slices.ContainsFunc(srv.Slots, func(sl app.Slot) bool { return sl.Path == p && sl.Env == "" }) {
					args = append(args, p)
				}
			}
		} else {
			env = maps.Clone(srv.Env)
			if env == nil {
				env = map[string]string{}
			}
			env[app.RootsEnvVariable] = app.EncodeRootsEnv(paths)
		}
	}
	return newCommand(srv.Command, args, app.ServerEnv(os.Environ(), &snap.State, env), srv.Cwd), paths
}

// longLived connects its inner transport with its own context rather than
// the (short) one of the handshake.
type longLived struct {
	ctx   context.Context
	inner sdk.Transport
}

func (t *longLived) Connect(context.Context) (sdk.Connection, error) { return t.inner.Connect(t.ctx) }

// headerTransport adds a server's configured headers (often a token) to
// the requests that go to that server's origin, and to no other: a redirect
// to another host or scheme must not carry them there.
type headerTransport struct {
	base    http.RoundTripper
	origin  string // scheme://host[:port] of the configured URL
	headers map[string]string
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if originOf(r.URL) != t.origin {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

func originOf(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

// httpClient is the client of a remote server at endpoint, with its headers.
// Every reply body is bounded (limitedBodies).
func httpClient(endpoint string, headers map[string]string) *http.Client {
	base := limitedBodies{base: http.DefaultTransport}
	if len(headers) == 0 {
		return &http.Client{Transport: base}
	}
	origin := ""
	if u, err := url.Parse(endpoint); err == nil {
		origin = originOf(u)
	}
	return &http.Client{Transport: &headerTransport{base: base, origin: origin, headers: headers}}
}

// hide is err with the secrets the server was started with taken out of
// its text (an error from the HTTP client names the URL in full, a failed
// start may quote the command line), so that the status and the log never
// show them; it unwraps to err.
func (a *adapter) hide(err error) error {
	if msg := a.hider.Load().Hide(err.Error()); msg != err.Error() {
		return hiddenError{msg, err}
	}
	return err
}

type hiddenError struct {
	msg string
	err error
}

func (e hiddenError) Error() string { return e.msg }
func (e hiddenError) Unwrap() error { return e.err }
