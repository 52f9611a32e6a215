package app

import (
	"slices"
	"time"

	"rootkeeper/app/words"
)

// A ReachCall is one system call of a confined server past its folders,
// as the person is shown it: what it does to which path. The calls that
// wait on a reach request are listed in it (Request.Calls), and "allow
// once" answers exactly the calls the person was shown, each with no more
// than its own access: a read is opened for reading, a write for writing,
// and a write is never let through on a "once" given for a read.
type ReachCall struct {
	// ID names the call across processes (the bridge or app that holds it,
	// the window or command line that answers it).
	ID string `json:"id"`
	// Op is what it does (the Op… constants).
	Op string `json:"op"`
	// Path is the path it named, absolute and cleaned.
	Path string `json:"path"`
	// NotOnce says why allow once cannot answer this call ("" when it
	// can): a folder made, a rename, a program run, an open whose resolve
	// flags Rootkeeper cannot honour. Only allowing the folder lets such a
	// call through, after the server's restart.
	NotOnce string `json:"notOnce,omitempty"`
	// Short is the call's short id while it waits (ShortIDs): what
	// `status` shows and `grant SERVER --once --call` takes. It is set
	// where waiting calls are shown, never kept in the state.
	Short string `json:"short,omitempty"`
}

// What a reach call does (ReachCall.Op, Request.Op): the operations the
// observer (mcp/confine's Attempt.Op) reports.
const (
	OpRead     = "read"     // open a file for reading
	OpList     = "list"     // open a folder to list it
	OpWrite    = "write"    // open an existing file for writing, keeping its content
	OpTruncate = "truncate" // empty an existing file (any O_TRUNC, O_RDONLY's included; truncate(2))
	OpCreate   = "create"   // create a file that does not exist
	OpReplace  = "replace"  // create over an existing file (O_CREAT|O_TRUNC): empty it and rewrite it
	OpMkdir    = "mkdir"    // make a folder
	OpRename   = "rename"   // rename or move
	OpExecute  = "execute"  // run a program
	OpWatch    = "watch"    // watch a path for changes (inotify): learns the names that come and go
)

// OpWrites reports whether a call doing op would change what is on disk:
// a write, a truncate, a create, a replace, a mkdir or a rename.
func OpWrites(op string) bool {
	switch op {
	case OpWrite, OpTruncate, OpCreate, OpReplace, OpMkdir, OpRename:
		return true
	}
	return false
}

// OpOnlyReads reports whether a call doing op only looks: it reads a file,
// lists a folder or watches one, and changes nothing. Only such calls are
// let through by an allow once that names a path rather than the calls
// (OnceCalls), and only such calls make allow once the dialog's default.
func OpOnlyReads(op string) bool {
	return op == OpRead || op == OpList || op == OpWatch
}

// OpText is op as a person reads it, for a path: "read", "change",
// "empty and rewrite", "create", "make the folder", "rename", "run".
func OpText(op string) string {
	switch op {
	case OpRead:
		return "read"
	case OpList:
		return "list"
	case OpWrite:
		return "change"
	case OpTruncate:
		return "empty and rewrite"
	case OpCreate:
		return "create"
	case OpReplace:
		return "replace (empty and rewrite)"
	case OpMkdir:
		return "make the folder"
	case OpRename:
		return "rename"
	case OpExecute:
		return "run"
	case OpWatch:
		return "watch for changes in"
	case OpConnect:
		return "connect to"
	case "":
		return "reach"
	}
	return op
}

// MaxReachCalls bounds the calls that wait on one request: more calls on
// the folder while it is asked are refused at once.
const MaxReachCalls = 16

// DefaultReachWait is how long a confined server's calls wait, by default,
// while a person is asked about the folder they tried (Settings.ReachWait).
const DefaultReachWait = 10 * time.Second

// The bounds of Settings.ReachWait.
const (
	MinReachWait = time.Second
	MaxReachWait = 2 * time.Minute
)

// OnceLasts is how long an allow once is kept in the state: longer than
// any call waits (MaxReachWait), so that the process holding the calls
// sees it.
const OnceLasts = MaxReachWait + time.Minute

// ReachWait is how long a confined server's call past its folders waits
// while a person is asked: the setting, within its bounds.
func (s *State) ReachWait() time.Duration {
	if d, ok := policyReachWait(); ok {
		return min(max(d, MinReachWait), MaxReachWait)
	}
	if s.Settings == nil || s.Settings.ReachWait == 0 {
		return DefaultReachWait
	}
	return min(max(time.Duration(s.Settings.ReachWait)*time.Second, MinReachWait), MaxReachWait)
}

// Waiting are the calls that wait on r at now: none once its wait is over
// (Until), or when nobody was asked.
func (r Request) Waiting(now time.Time) []ReachCall {
	if r.Until.IsZero() || !now.Before(r.Until) {
		return nil
	}
	return r.Calls
}

// AskReach records call, made by server past its folders, on the request
// for folder, and says until when the call is to wait for the person's
// answer (zero: refuse it now). With asking (a person can be asked now)
// a new request is raised and the call waits until the request's wait is
// over; a call on a folder whose request is being asked joins it (up to
// MaxReachCalls) and waits as long as the first. A call on a request
// asked before, that nobody answered while it waited, or asked with
// nobody there, is refused at once: a person who is not there is never
// waited for twice. Without asking the request is recorded for the
// person to find later, and the call is refused now.
//
// Nothing is recorded, and the call is refused, for a folder the server
// already has an answer for (an allow that covers it, a deny): the caller
// answers from the snapshot.
func (s *State) AskReach(server, folder string, call ReachCall, now time.Time, asking bool) (time.Time, error) {
	if i := slices.IndexFunc(s.Requests, func(r Request) bool { return r.Server == server && r.Path == folder }); i >= 0 {
		r := &s.Requests[i]
		if r.From != FromReach || len(r.Waiting(now)) == 0 || len(r.Calls) >= MaxReachCalls {
			return time.Time{}, nil
		}
		r.Calls = append(slices.Clip(r.Calls), call)
		return r.Until, nil
	}
	changed, err := s.AddRequest(server, folder, FromReach, now)
	if err != nil || !changed {
		return time.Time{}, err
	}
	i := slices.IndexFunc(s.Requests, func(r Request) bool { return r.Server == server && r.Path == folder })
	r := &s.Requests[i]
	r.Tried, r.Op = call.Path, call.Op
	if !asking {
		r.Unasked = true
		return time.Time{}, nil
	}
	r.Calls = []ReachCall{call}
	r.Until = now.Add(s.ReachWait())
	return r.Until, nil
}

// A OnceAnswer is what an allow once let through: the calls it answered
// (each gets what it asked for, no more) and those it could not (refused;
// only allowing the folder lets them through).
type OnceAnswer struct {
	Server, Folder string
	Let, NotLet    []ReachCall
}

// GrantOnce answers the open reach request of server for folder with allow
// once, given at at: the waiting calls named by ids (nil: every call
// waiting now, changes included; the window and the command line always
// name the calls they showed, see OnceCalls and GrantOnceCalls) that
// allow once can answer are let through, each with its own access, and nothing is widened: no
// decision, no restart, and the next attempt asks again. The request is
// dropped; calls not answered are refused. A request whose waiting calls
// allow once can answer none of is refused with an InputError naming
// them, and nothing changes; so is one where none of the calls ids names
// waits any more (the person answered after their wait ran out).
func (s *State) GrantOnce(server, folder string, ids []string, by Source, at time.Time) (OnceAnswer, error) {
	if !OnceAllowed() {
		return OnceAnswer{}, policyError("allow once is not offered here: only lasting decisions")
	}
	if err := policyRefusesGrant(folder); err != nil {
		return OnceAnswer{}, err
	}
	r, ok := s.Request(server, folder)
	if !ok || r.From != FromReach && r.From != FromNetwork {
		return OnceAnswer{}, inputErrorf("%s has no attempt waiting on %q (allow once answers a folder a confined server tried to reach)", server, folder)
	}
	ans := OnceAnswer{Server: server, Folder: folder}
	for _, c := range r.Waiting(at) {
		if ids != nil && !slices.Contains(ids, c.ID) {
			continue
		}
		if c.NotOnce != "" {
			ans.NotLet = append(ans.NotLet, c)
		} else {
			ans.Let = append(ans.Let, c)
		}
	}
	if len(ans.Let) == 0 && len(ans.NotLet) > 0 {
		return ans, &InputError{Msg: onceRefusal(ans)}
	}
	if len(ans.Let) == 0 && len(ids) > 0 {
		// The calls the person was shown gave up while they read: nothing
		// to let through, and the request stays for them to decide.
		return ans, inputErrorf("%s no longer waits on %q: its wait ran out and it was refused; allow the folder or deny it", server, folder)
	}
	s.dropRequest(server, folder)
	s.Once = slices.DeleteFunc(slices.Clip(s.Once), func(o Once) bool { return at.Sub(o.At) > OnceLasts })
	if len(ans.Let) > 0 {
		o := Once{Server: server, Path: folder, At: at, By: by}
		for _, c := range ans.Let {
			o.Calls = append(o.Calls, c.ID)
		}
		s.Once = append(s.Once, o)
		if len(s.Once) > MaxRequestsPerServer {
			s.Once = s.Once[len(s.Once)-MaxRequestsPerServer:]
		}
	}
	return ans, nil
}

// onceRefusal says why allow once let nothing through.
func onceRefusal(a OnceAnswer) string {
	c := a.NotLet[0]
	return words.SafeText(a.Server + " waits to " + OpText(c.Op) + " " + c.Path + ", which allow once cannot let through (" + c.NotOnce + "); allow the folder (`rootkeeper grant " + words.ShellQuote(a.Server) + " " + words.ShellQuote(a.Folder) + "`) or deny it")
}

// OnceCalls picks, of r's calls waiting at now, the ones an allow once
// typed on the command line for a path answers: target is the request's
// folder (its waiting calls that only read, list or watch) or a path a
// call named (those of its calls). A call that changes anything (OpWrites)
// or runs a program is never let through by a path, whichever it is: only
// when it is named by its id (State.GrantOnceCalls), so that a write that
// joined after the person read `status` never rides on the once they gave
// for a read. withheld are such calls target named, which the once
// refuses. A call allow once cannot answer at all (NotOnce) is picked, so
// that GrantOnce refuses it saying why. ok is false when target is
// neither the folder nor a path a call named.
func (r Request) OnceCalls(target string, now time.Time) (ids []string, withheld []ReachCall, ok bool) {
	folder := target == r.Path
	for _, c := range r.Waiting(now) {
		if c.Path == target {
			ok = true
		} else if !folder {
			continue
		}
		if OpOnlyReads(c.Op) || c.NotOnce != "" {
			ids = append(ids, c.ID)
		} else {
			withheld = append(withheld, c)
		}
	}
	return ids, withheld, ok || folder
}

// OnceFor is the allow once that answered server's call id, if any.
func (s *State) OnceFor(server, id string) (Once, bool) {
	for i := len(s.Once) - 1; i >= 0; i-- {
		if o := s.Once[i]; o.Server == server && slices.Contains(o.Calls, id) {
			return o, true
		}
	}
	return Once{}, false
}
