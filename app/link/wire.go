// Package link joins the window to the running app. Rootkeeper lives in
// the tray all day with its window closed, so the always-on process (the
// MCP clients, the bridges' hub, the health monitor, the tray menu) runs
// without a GUI toolkit's render loop, and the window is a process of its
// own, started when it is needed and gone when it is closed:
//
//	always-on process                         window process (on demand)
//	  Hub ── "window" stream op ────────────── Window
//	   │  → live: health, servers, notices,     │  mirrors it into its own
//	   │          bridges (what changed)        │  app.Core, whose state it
//	   │  → show: open a tab, share a folder    │  reads from the state file
//	   │  → review: a sampling request          │  ← reviewed
//	   │  → resource: a server's change         │  ← finding: the tray's line
//	   │  → later: what was put off             │  ← later: what the person put off
//	   │                                        │  ← quit: quit the app
//	   └─ control ops ◄──────────────────────── Restart, Log ("restart", "log"),
//	                                              Check ("check": the health
//	                                              monitor checks a folder now),
//	                                              resources ("resources")
//
// Decisions still go through the state file, which both processes watch;
// the link carries only what the file does not: the live view, what to
// show, and the person's reviews of sampling requests.
//
// The Hub starts a window when the person asks for it (the tray, a second
// launch) and when something needs the person: a question or request to
// ask (app.ConsentQueue says what) or a sampling request to review.
// A window that ends (closed, or killed) leaves what was on screen
// (app.ConsentQueue's PutOffAll): the hub does not bring a window up again
// for it, and the next window asks it again. What the person put off with
// Later the window tells the hub, which hands it to the next window.
//
// Messages are JSON lines of at most MaxLine bytes either way.
package link

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"rootkeeper/app"
)

// Op is the control socket's stream op a window attaches with.
const Op = "window"

// MaxLine is the longest message line either way (as the MCP messages a
// sampling review carries).
const MaxLine = 16 << 20

// Show is what a window is asked to show when it comes up or is raised.
type Show struct {
	// Tab selects a tab by its title ("Roots", "Servers", …); empty keeps
	// the current one.
	Tab string `json:"tab,omitempty"`
	// Share opens the share dialog for this folder (the tray ticked a
	// folder that some server has not been asked about).
	Share string `json:"share,omitempty"`
	// Server and Request ask the open request of Server for the folder
	// Request (the tray's line about a folder a server tried to reach).
	Server  string `json:"server,omitempty"`
	Request string `json:"request,omitempty"`
}

// review is a sampling request, or a model's answer, for the person.
type review struct {
	Request app.SamplingRequest `json:"request"`
	// Result, when set, is the model's answer to review; otherwise the
	// request itself is reviewed.
	Result *app.SamplingResult `json:"result,omitempty"`
}

// reviewed is the person's answer to a review.
type reviewed struct {
	Request *app.SamplingRequest `json:"request,omitempty"`
	Result  *app.SamplingResult  `json:"result,omitempty"`
	OK      bool                 `json:"ok"`
	Err     string               `json:"error,omitempty"`
}

// resourceEvent is a server's word that its resources changed.
type resourceEvent struct {
	Server string `json:"server"`
	URI    string `json:"uri,omitempty"`
}

// message is one line of the link.
type message struct {
	Kind string `json:"kind"`
	// ID pairs a review with its answer, and names the review withdrawn.
	ID       uint64         `json:"id,omitempty"`
	Live     *app.Live      `json:"live,omitempty"`
	Show     *Show          `json:"show,omitempty"`
	Review   *review        `json:"review,omitempty"`
	Reviewed *reviewed      `json:"reviewed,omitempty"`
	Resource *resourceEvent `json:"resource,omitempty"`
	Later    *app.Later     `json:"later,omitempty"`
	Text     string         `json:"text,omitempty"`
}

// The kinds of message.
const (
	kindLive     = "live"     // app → window: the live view's changes
	kindShow     = "show"     // app → window: come forward, show this
	kindReview   = "review"   // app → window: review this
	kindWithdraw = "withdraw" // app → window: the review ID is no longer waited for
	kindResource = "resource" // app → window: a server's resources changed
	kindLater    = "later"    // app → window at attach, window → app: what the person put off
	kindBusy     = "busy"     // app → window: another window is attached
	kindReviewed = "reviewed" // window → app: the answer to review ID
	kindFinding  = "finding"  // window → app: the tray's line about the scan
	kindQuit     = "quit"     // window → app: quit Rootkeeper
)

// errTooLong is a message line past MaxLine.
var errTooLong = fmt.Errorf("link: message longer than %d bytes", MaxLine)

// readMessage reads one line of at most MaxLine bytes.
func readMessage(r *bufio.Reader) (message, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			return message{}, errTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return message{}, err
		}
		break
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return message{}, fmt.Errorf("link: bad message: %w", err)
	}
	return m, nil
}

// encode is m as one line.
func encode(m message) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(b)+1 > MaxLine {
		return nil, errTooLong
	}
	return append(b, '\n'), nil
}
