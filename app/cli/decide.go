package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// decide records an explicit decision typed by the person: `grant` is
// consent, `deny` is a remembered refusal.
func (c *command) decide(verb string, args []string, verdict app.Verdict) error {
	f := newFlags(verb)
	untilQuit := f.Bool("until-quit")
	var once *bool
	var calls *[]string
	if verdict == app.Allow {
		once = f.Bool("once")
		calls = f.List("call")
	}
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if calls != nil && len(*calls) > 0 {
		if !*once {
			return usagef("--call names calls to let through once: give it with --once (`rootkeeper grant SERVER --once --call ID`)")
		}
		if err := exactly(verb+" --once --call", pos, "SERVER"); err != nil {
			return err
		}
		refs := callRefs(*calls)
		if len(refs) == 0 {
			return usagef("--call %q names no call: give the id `rootkeeper status` shows", strings.Join(*calls, ","))
		}
		return c.grantCalls(pos[0], refs)
	}
	if err := exactly(verb, pos, "SERVER", "ROOT"); err != nil {
		return err
	}
	scope := app.Always
	if *untilQuit {
		scope = app.UntilQuit
	}
	if once != nil && *once {
		return c.grantOnce(pos[0], pos[1])
	}
	var done decided
	_, err = c.update(func(s *app.State) error {
		var err error
		done, err = c.decideIn(s, pos[0], pos[1], verdict, scope)
		return err
	})
	if err != nil {
		return err
	}
	c.tellDecided(pos[0], verdict, done)
	return nil
}

// decided is what a decision typed by the person did, for the sentence
// that tells it.
type decided struct {
	root    app.Root // the root decided
	need    string   // or a folder allowed to a confined server alone, to run
	refused string   // or a folder refused to a confined server alone
}

// decideIn records in s the verdict of the person, for scope, on server
// and the folder ref names (a path, relative to the working folder): a
// folder a confined server reached for is decided for that server alone
// (unless it is a root already); a folder asked for (by a host, or on the
// server's command line) is decided like a root, and granting it makes it
// one; any other folder must be a root.
func (c *command) decideIn(s *app.State, server, ref string, verdict app.Verdict, scope app.Scope) (decided, error) {
	var done decided
	if _, ok := s.Server(server); !ok {
		return done, &app.InputError{Msg: "no server \"" + server + "\""}
	}
	d := app.Decision{Server: server, Verdict: verdict, Scope: scope, By: app.ByCommandLine}
	// A folder a confined server reached for, refused: that server's
	// alone, unless it is a root already (then a deny decision).
	if req, ok := requestFor(s, server, ref, c.env.Cwd); ok && req.From == app.FromReach && verdict == app.Deny {
		if _, isRoot := s.Root(req.Path); !isRoot {
			done.refused = req.Path
			return done, s.DenyAsked(server, req.Path, app.ByCommandLine, time.Now().UTC())
		}
	}
	// A folder a confined server reached for, or whose refusal
	// stopped its start, is what it needs to run: allowed, it is
	// that server's alone unless it is a root already.
	if folder, ok := askedByReach(s, server, ref, c.env.Cwd); ok && verdict == app.Allow {
		asRoot, err := s.AllowAsked(server, folder, scope, app.ByCommandLine, time.Now().UTC(), c.needPlace())
		if err != nil {
			return done, err
		}
		if !asRoot {
			done.need = folder
		}
		done.root, _ = s.Root(folder)
		return done, nil
	}
	// A folder asked for (by a host, or on the server's command line)
	// is decided like a root; granting it makes it one.
	if req, ok := requestFor(s, server, ref, c.env.Cwd); ok {
		d.Root = req.Path
		if err := s.DecideRequest(d); err != nil {
			return done, err
		}
		done.root, _ = s.Root(req.Path)
		return done, nil
	}
	r, err := findRoot(s, ref, c.env.Cwd)
	if err != nil {
		return done, err
	}
	done.root = r
	d.Root = r.Path
	return done, s.Decide(d)
}

// tellDecided says what the decision of verdict on server did, and how to
// undo it; a deny on a folder the server still sees through a wider root
// it is allowed is warned about.
func (c *command) tellDecided(server string, verdict app.Verdict, done decided) {
	root := done.root
	switch {
	case done.refused != "":
		c.printf("%s may not reach %s; it is not asked again (no root: no other server is asked about it; undo: `rootkeeper revoke %s %s`)\n",
			words.SafeText(server), words.SafeText(done.refused), words.ShellQuote(server), words.ShellQuote(done.refused))
	case done.need != "":
		c.printf("%s may now use %s to run: it is in its ruleset alone, read-write (no root: no other server is asked about it, nor is it in its roots); it restarts with it (take it away: `rootkeeper revoke %s %s`)\n",
			words.SafeText(server), words.SafeText(done.need), words.ShellQuote(server), words.ShellQuote(done.need))
	case verdict == app.Allow:
		c.printf("%s may now see %s", words.SafeText(server), words.SafeText(root.Path))
		if !root.Enabled {
			c.printf(" (once the root is enabled: `rootkeeper roots enable %s`)", words.ShellQuote(root.Path))
		}
		c.printf("\n")
	default:
		c.printf("%s may not see %s\n", words.SafeText(server), words.SafeText(root.Path))
		c.warnCovered(server, root.Path)
	}
}

// requestFor finds server's open request for the folder ref names (a path,
// relative to cwd; symlinks resolved when the folder exists).
func requestFor(s *app.State, server, ref, cwd string) (app.Request, bool) {
	canon, display, err := app.CanonicalPath(ref, cwd)
	if err != nil {
		if display == "" {
			return app.Request{}, false
		}
		canon = display
	}
	if r, ok := s.Request(server, canon); ok {
		return r, true
	}
	return s.Request(server, display)
}

// askedByReach finds the folder ref names (a path, relative to cwd) when
// confined server asked for it by reaching for it (an open request
// FromReach) or its confined start failed for want of it
// (ConfineFailure.Folder).
func askedByReach(s *app.State, server, ref, cwd string) (string, bool) {
	if r, ok := requestFor(s, server, ref, cwd); ok && r.From == app.FromReach {
		return r.Path, true
	}
	f, ok := s.ConfineFailureOf(server)
	if !ok || f.Folder == "" {
		return "", false
	}
	canon, display, _ := app.CanonicalPath(ref, cwd)
	if canon == f.Folder || display == f.Folder {
		return f.Folder, true
	}
	return "", false
}

// needPlace says where a folder a server needs to run may not be: the
// home folder (or above it), the state folder.
func (c *command) needPlace() app.NeedPlace {
	return app.NeedPlace{Home: c.env.Home, StateDir: c.store.Dir()}
}

// warnCovered says when server still sees path through a wider root it is
// allowed (a deny on ~/secret under an allowed ~ hides nothing), and how to
// hide it.
func (c *command) warnCovered(server, path string) {
	snap, err := c.snapshot()
	if err != nil {
		return
	}
	for _, r := range app.CoveredBy(snap, server, path) {
		c.printf("warning: %s still sees %s inside %s, which it is allowed; roots cannot exclude a subfolder: `rootkeeper revoke %s %s` to hide it\n",
			words.SafeText(server), words.SafeText(path), words.SafeText(r.Path), words.ShellQuote(server), words.ShellQuote(r.Path))
	}
}

func (c *command) revoke(args []string) error {
	f := newFlags("revoke")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("revoke", pos, "SERVER", "ROOT"); err != nil {
		return err
	}
	var had bool
	var root app.Root
	var need, unrefused string
	_, err = c.update(func(s *app.State) error {
		if _, ok := s.Server(pos[0]); !ok {
			return &app.InputError{Msg: "no server \"" + pos[0] + "\""}
		}
		// A folder it needs to run goes from its ruleset; a folder it
		// was refused is asked about again.
		canon, display, _ := app.CanonicalPath(pos[1], c.env.Cwd)
		for _, p := range []string{canon, display} {
			if _, ok := s.Need(pos[0], p); ok && p != "" {
				need = p
				s.RevokeNeed(pos[0], p)
				return nil
			}
			if p != "" && s.Unrefuse(pos[0], p) {
				unrefused = p
				return nil
			}
		}
		r, err := findRoot(s, pos[1], c.env.Cwd)
		if err != nil {
			return err
		}
		root = r
		had = s.Revoke(pos[0], r.Path)
		return nil
	})
	if err != nil {
		return err
	}
	if need != "" {
		c.printf("revoked: %s no longer has %s in its ruleset; it restarts without it\n", words.SafeText(pos[0]), words.SafeText(need))
		return nil
	}
	if unrefused != "" {
		c.printf("revoked: %s was refused %s; its next attempt there asks again\n", words.SafeText(pos[0]), words.SafeText(unrefused))
		return nil
	}
	if had {
		c.printf("revoked: %s no longer sees %s\n", words.SafeText(pos[0]), words.SafeText(root.Path))
		c.warnCovered(pos[0], root.Path)
	} else {
		c.printf("%s had no decision for %s; nothing to revoke\n", words.SafeText(pos[0]), words.SafeText(root.Path))
	}
	return nil
}

func (c *command) setPaused(paused bool) error {
	if _, err := c.update(func(s *app.State) error { s.SetPaused(paused); return nil }); err != nil {
		return err
	}
	if paused {
		c.printf("sharing paused: no server sees any root until `rootkeeper resume`\n")
	} else {
		c.printf("sharing resumed\n")
	}
	return nil
}

// grantOnce is `grant SERVER PATH --once`: it answers calls of a confined
// server waiting on a folder with allow once (app.State.GrantOnce), and
// lets through only calls that read: PATH names the folder (its waiting
// reads, listings and watches) or a path a call named (its reads). A call
// that changes anything goes through once only when named by its id
// (grantCalls), so a write that joined after the person read `status` is
// refused, never let through on a once given for a read. Each call
// answered gets what it asked for and no more, the folder is not granted,
// and the next attempt asks again. It prints exactly what it let through
// and what it refused, each call with its id.
func (c *command) grantOnce(server, ref string) error {
	var ans app.OnceAnswer
	var waiting []app.ReachCall
	_, err := c.update(func(s *app.State) error {
		if _, ok := s.Server(server); !ok {
			return &app.InputError{Msg: "no server \"" + server + "\""}
		}
		now := time.Now().UTC()
		req, target, ok := onceRequest(s, server, ref, c.env.Cwd, now)
		if !ok {
			return &app.InputError{Msg: server + " has no attempt waiting on \"" + ref + "\" (allow once answers a folder a confined server tried to reach, or a file it tried)"}
		}
		waiting = shortCalls(s, server, req.Path, now)
		ids, held, _ := req.OnceCalls(target, now)
		if len(ids) == 0 && len(held) > 0 {
			// Only calls that change files wait: nothing is let through
			// and they keep waiting, for a once that names them.
			first := withShort(held[0], waiting)
			return &app.InputError{Msg: words.SafeText(fmt.Sprintf("%s waits to %s %s: a change goes through once only when named by its id (`rootkeeper grant %s --once --call %s`), or allow the folder (`rootkeeper grant %s %s`)",
				server, app.OpText(first.Op), first.Path, words.ShellQuote(server), first.Short, words.ShellQuote(server), words.ShellQuote(req.Path)))}
		}
		if ids == nil {
			ids = []string{} // nothing picked: answer none, rather than all
		}
		var err error
		ans, err = s.GrantOnce(server, req.Path, ids, app.ByCommandLine, now)
		return err
	})
	if err != nil {
		return err
	}
	if len(waiting) == 0 {
		c.printf("nothing of %s waits on %s now (a call waits only while you are asked); nothing was let through. The next attempt asks again; to let it in for good: `rootkeeper grant %s %s`\n",
			server, ref, words.ShellQuote(server), words.ShellQuote(ans.Folder))
		return nil
	}
	c.printOnce([]app.OnceAnswer{ans}, map[string][]app.ReachCall{ans.Folder: waiting})
	return nil
}

// grantCalls is `grant SERVER --once --call ID…`: it lets through once
// exactly the waiting calls refs name, by their ids as `status` shows them
// (app.State.GrantOnceCalls), changes included: the one way a change goes
// through once from the command line. A ref that names no waiting call of
// server is refused (exit 2), and then nothing is let through. It prints
// what it let through and what it refused, each call with its id.
func (c *command) grantCalls(server string, refs []string) error {
	var answers []app.OnceAnswer
	waiting := map[string][]app.ReachCall{}
	_, err := c.update(func(s *app.State) error {
		now := time.Now().UTC()
		for _, r := range s.RequestsFor(server) {
			waiting[r.Path] = shortCalls(s, server, r.Path, now)
		}
		var err error
		answers, err = s.GrantOnceCalls(server, refs, app.ByCommandLine, now)
		return err
	})
	if err != nil {
		return err
	}
	c.printOnce(answers, waiting)
	return nil
}

// printOnce prints what allow once did: the calls it let through, and
// every other call that waited on the requests it answered, refused, each
// with its short id and why (waiting: those calls by folder, Short set).
func (c *command) printOnce(answers []app.OnceAnswer, waiting map[string][]app.ReachCall) {
	for _, ans := range answers {
		q := func(s string) string { return words.ShellQuote(s) }
		name := words.SafeText(ans.Server)
		if len(ans.Let) > 0 {
			c.printf("%s may do this once, and nothing more (the next attempt asks again):\n", name)
			for _, call := range ans.Let {
				c.printf("  %s\n", callText(withShort(call, waiting[ans.Folder])))
			}
		}
		for _, call := range waiting[ans.Folder] {
			switch {
			case slices.ContainsFunc(ans.Let, func(l app.ReachCall) bool { return l.ID == call.ID }):
			case call.NotOnce != "":
				c.printf("refused: %s (%s); to allow it, allow the folder: `rootkeeper grant %s %s`\n", callText(call), call.NotOnce, q(ans.Server), q(ans.Folder))
			case !app.OpOnlyReads(call.Op):
				c.printf("refused: %s (a change goes through once only when named by its id: `rootkeeper grant %s --once --call ID`; it asks again when tried again)\n", callText(call), q(ans.Server))
			default:
				c.printf("refused: %s (not named)\n", callText(call))
			}
		}
	}
}

// callText is a waiting call as the command line shows it, with its short
// id: "[3fa9c1] read /home/ada/secret/a.txt".
func callText(call app.ReachCall) string {
	return words.SafeText("[" + call.Short + "] " + app.OpText(call.Op) + " " + call.Path)
}

// shortCalls are the calls of server waiting on its request for folder at
// now, with their short ids (unique among all its waiting calls).
func shortCalls(s *app.State, server, folder string, now time.Time) []app.ReachCall {
	for _, r := range app.ShortIDs(s.RequestsFor(server), now) {
		if r.Path == folder {
			return r.Waiting(now)
		}
	}
	return nil
}

// withShort is call with its short id from waiting (the same calls, Short
// set).
func withShort(call app.ReachCall, waiting []app.ReachCall) app.ReachCall {
	for _, w := range waiting {
		if w.ID == call.ID {
			return w
		}
	}
	return call
}

// callRefs are the call ids --call was given, each option a single id or
// a comma-separated list.
func callRefs(list []string) []string {
	var out []string
	for _, v := range list {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				out = append(out, id)
			}
		}
	}
	return out
}

// onceRequest finds the reach request of server that ref names: its folder,
// or a file one of its waiting calls named. target is ref made canonical as
// the request knows it.
func onceRequest(s *app.State, server, ref, cwd string, now time.Time) (app.Request, string, bool) {
	if r, ok := requestFor(s, server, ref, cwd); ok {
		return r, r.Path, true
	}
	abs := ref
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, ref)
	}
	abs = filepath.Clean(abs)
	for _, r := range s.RequestsFor(server) {
		if r.From != app.FromReach {
			continue
		}
		for _, c := range r.Waiting(now) {
			if c.Path == abs {
				return r, abs, true
			}
		}
	}
	return app.Request{}, "", false
}
