package app

import (
	"slices"
	"sort"
	"time"
)

// ConsentQueue decides what the window asks the person next, so that the
// window only draws the dialog it is told to and reports the answer. It
// remembers what the person put off with Later and which answers are being
// written (so that nothing is asked twice); everything else it reads from
// the snapshot's grid. It is not safe for concurrent use: the window calls
// it from its UI goroutine.
type ConsentQueue struct {
	// putOff are the review questions put off ("SERVER\x00PATH"): not
	// asked again until a new one comes.
	putOff map[string]bool
	// laterRequests are the requests put off, with when each was last
	// asked then: asked again only when asked anew (a host starting a held
	// server).
	laterRequests map[string]time.Time
	// leftQuestions and leftRequests are what was waiting when a window
	// ended (PutOffAll): the running app does not bring a window up again
	// for them, but they are not handed to the next window (Later), which
	// asks them again.
	leftQuestions map[string]bool
	leftRequests  map[string]time.Time
	// first is the request the person asked to answer now (AskFirst).
	first string
	// busy are the servers and requests whose answer is being written.
	busy map[string]bool
}

// AskKind says what the window is to ask.
type AskKind int

// What Next may say.
const (
	// AskNothing: nothing waits.
	AskNothing AskKind = iota
	// AskQuestion: one server, one folder, in the small dialog.
	AskQuestion
	// AskReview: several questions, in one review screen.
	AskReview
	// AskRequest: a folder asked for a server (by a host, or its
	// configuration).
	AskRequest
	// AskWait: servers are still starting; ask again after Wait, so that
	// servers that start together are asked in one review.
	AskWait
)

// Ask is what the window is to ask now.
type Ask struct {
	Kind      AskKind
	Questions []Question // AskQuestion (one) and AskReview
	Request   Request    // AskRequest
	Wait      time.Duration
}

// Next says what to ask now, given the snapshot's grid and the time: the
// request the person asked to answer (AskFirst); questions of connected
// servers (after waiting for servers still starting), unless the person
// put them all off; then the open requests, one at a time, those whose
// calls wait first (RequestsByUrgency), put-off ones only once asked anew.
func (q *ConsentQueue) Next(g *Grid, now time.Time) Ask {
	reqs := g.Snapshot().State.Requests
	if q.first != "" {
		if i := slices.IndexFunc(reqs, func(r Request) bool { return requestKey(r) == q.first }); i >= 0 && !q.busy[q.first] {
			return Ask{Kind: AskRequest, Request: reqs[i]}
		}
	}
	qs := q.Questions(g)
	if len(qs) > 0 && !q.allPutOff(qs) {
		if wait := g.Settling(now); wait > 0 {
			return Ask{Kind: AskWait, Wait: wait}
		}
		if len(qs) == 1 {
			return Ask{Kind: AskQuestion, Questions: qs}
		}
		return Ask{Kind: AskReview, Questions: qs}
	}
	for _, r := range RequestsByUrgency(reqs, now) {
		key := requestKey(r)
		if q.putOffRequest(r) || q.busy[key] {
			continue
		}
		return Ask{Kind: AskRequest, Request: r}
	}
	return Ask{Kind: AskNothing}
}

// putOffRequest reports whether r was put off (or left in a window that
// ended) and not asked anew since.
func (q *ConsentQueue) putOffRequest(r Request) bool {
	key := requestKey(r)
	if put, ok := q.laterRequests[key]; ok && !r.Last.After(put) {
		return true
	}
	put, ok := q.leftRequests[key]
	return ok && !r.Last.After(put)
}

// AskFirst has Next ask the request of server for path before anything
// else, put off or not, while it is open: the person clicked to answer it
// (the tray, the window's line about what waits, the Access tab).
func (q *ConsentQueue) AskFirst(server, path string) {
	q.first = requestKey(Request{Server: server, Path: path})
	delete(q.laterRequests, q.first)
	delete(q.leftRequests, q.first)
}

// Questions are the grid's questions of servers whose answers are not
// being written.
func (q *ConsentQueue) Questions(g *Grid) []Question {
	var out []Question
	for _, x := range g.Questions() {
		if !q.busy[x.Server] {
			out = append(out, x)
		}
	}
	return out
}

// Fresh are the questions not yet asked in an open review (asked says
// which, as QuestionKey gives them) and not being answered: what a review
// grows by while it is open.
func (q *ConsentQueue) Fresh(g *Grid, asked map[string]bool) []Question {
	var out []Question
	for _, x := range q.Questions(g) {
		if !asked[QuestionKey(x)] {
			out = append(out, x)
		}
	}
	return out
}

func (q *ConsentQueue) allPutOff(qs []Question) bool {
	if q.putOff == nil && q.leftQuestions == nil {
		return false
	}
	for _, x := range qs {
		if k := QuestionKey(x); !q.putOff[k] && !q.leftQuestions[k] {
			return false
		}
	}
	return true
}

// PutOff records that the person answered Later to qs (a review, or one
// server's dialog): they are not asked again until a new question comes.
func (q *ConsentQueue) PutOff(qs []Question) {
	if q.putOff == nil {
		q.putOff = map[string]bool{}
	}
	for _, x := range qs {
		q.putOff[QuestionKey(x)] = true
	}
}

// PutOffRequest records that the person answered Later to r.
func (q *ConsentQueue) PutOffRequest(r Request) {
	if q.laterRequests == nil {
		q.laterRequests = map[string]time.Time{}
	}
	key := requestKey(r)
	q.laterRequests[key] = r.Last
	if q.first == key {
		q.first = ""
	}
}

// Later is what the person put off with Later, carried from one window to
// the next: the window is a process that ends when it closes, and the
// running app keeps what its window put off (package link), so that
// opening the window again does not ask again what the person put off.
// What a window was asking when it ended is not in it: the next window
// asks that again.
type Later struct {
	// Questions are the keys of the put-off questions (QuestionKey).
	Questions []string `json:"questions,omitempty"`
	// Requests are the put-off requests' keys, each with the time the
	// request had last been asked when it was put off.
	Requests map[string]time.Time `json:"requests,omitempty"`
}

// Later is what q has put off.
func (q *ConsentQueue) Later() Later {
	var l Later
	for k := range q.putOff {
		l.Questions = append(l.Questions, k)
	}
	sort.Strings(l.Questions)
	if len(q.laterRequests) > 0 {
		l.Requests = make(map[string]time.Time, len(q.laterRequests))
		for k, t := range q.laterRequests {
			l.Requests[k] = t
		}
	}
	return l
}

// SetLater replaces what q was told to put off with l (what was left in
// a window that ended stays as it is).
func (q *ConsentQueue) SetLater(l Later) {
	q.putOff, q.laterRequests = nil, nil
	if len(l.Questions) > 0 {
		q.putOff = make(map[string]bool, len(l.Questions))
		for _, k := range l.Questions {
			q.putOff[k] = true
		}
	}
	if len(l.Requests) > 0 {
		q.laterRequests = make(map[string]time.Time, len(l.Requests))
		for k, t := range l.Requests {
			q.laterRequests[k] = t
		}
	}
}

// PutOffAll leaves everything g asks now: what a window ending (closed,
// or killed) with a question on screen means to the running app, which
// does not bring a window up again for what the person just closed. It is
// not put off for the person (Later): the next window asks it again,
// while what comes after (a new question, a request asked anew) brings a
// window up.
func (q *ConsentQueue) PutOffAll(g *Grid) {
	if qs := g.Questions(); len(qs) > 0 {
		if q.leftQuestions == nil {
			q.leftQuestions = map[string]bool{}
		}
		for _, x := range qs {
			q.leftQuestions[QuestionKey(x)] = true
		}
	}
	for _, r := range g.Snapshot().State.Requests {
		if q.leftRequests == nil {
			q.leftRequests = map[string]time.Time{}
		}
		q.leftRequests[requestKey(r)] = r.Last
	}
	q.first = ""
}

// Waiting is how many questions the person put off and still waits for
// (the window's banner offers to review them), or 0 when none was put off.
func (q *ConsentQueue) Waiting(g *Grid) int {
	if q.putOff == nil {
		return 0
	}
	return len(g.Questions())
}

// ReviewAll forgets what was put off: the banner's Review… asks everything
// again.
func (q *ConsentQueue) ReviewAll() { q.putOff, q.leftQuestions = nil, nil }

// Servers names the servers of qs, sorted: whom an answer to them
// decides for.
func Servers(qs []Question) []string {
	set := map[string]bool{}
	for _, x := range qs {
		set[x.Server] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Answering marks servers as being answered: their questions are not asked
// again until Answered.
func (q *ConsentQueue) Answering(servers ...string) {
	for _, s := range servers {
		q.mark(s, true)
	}
}

// Answered ends what Answering marked.
func (q *ConsentQueue) Answered(servers ...string) {
	for _, s := range servers {
		q.mark(s, false)
	}
}

// AnsweringRequest marks r as being answered; AnsweredRequest ends it.
func (q *ConsentQueue) AnsweringRequest(r Request) { q.mark(requestKey(r), true) }

// AnsweredRequest ends what AnsweringRequest marked.
func (q *ConsentQueue) AnsweredRequest(r Request) { q.mark(requestKey(r), false) }

func (q *ConsentQueue) mark(key string, on bool) {
	if q.busy == nil {
		q.busy = map[string]bool{}
	}
	if on {
		q.busy[key] = true
	} else {
		delete(q.busy, key)
	}
}

// QuestionKey names a question: "SERVER\x00PATH".
func QuestionKey(x Question) string { return x.Server + "\x00" + x.Root.Path }

func requestKey(r Request) string { return "request:" + r.Server + "\x00" + r.Path }

// RequestDecision is the decision the person's answer to request r makes.
func RequestDecision(r Request, allow bool, scope Scope, by Source) Decision {
	v := Deny
	if allow {
		v = Allow
	}
	return Decision{Server: r.Server, Root: r.Path, Verdict: v, Scope: scope, By: by}
}

// RequestRoot is the folder of request r as a root, for the dialog's
// access check and warnings.
func RequestRoot(r Request) Root {
	return Root{Path: r.Path, Name: baseName(r.Path), Source: SourceRequested, Enabled: true}
}

// Ticked splits the items of a consent dialog (folders, or servers) into
// those ticked, allowed, and the rest, denied: an unticked box is a no,
// remembered, not a question left open.
func Ticked(items []string, ticked []bool) (allowed, denied []string) {
	for i, it := range items {
		if i < len(ticked) && ticked[i] {
			allowed = append(allowed, it)
		} else {
			denied = append(denied, it)
		}
	}
	return allowed, denied
}
