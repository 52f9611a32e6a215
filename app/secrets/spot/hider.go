package spot

import (
	"io"
	"slices"
	"strings"
	"sync"
)

// MinHidden is the length below which a secret is not hidden in free text
// (errors, logs, a server's stderr): a shorter one would hide every
// occurrence of a common word and is too short to be worth a guess anyway.
const MinHidden = 4

// A Hider takes known secrets out of free text: what a server was started
// with, out of the errors, logs and stderr that may name it.
type Hider struct {
	values  []string // longest first, so that a secret holding another goes whole
	longest int
	first   [256]bool // the first bytes of the values
}

// NewHider hides values (those shorter than MinHidden are left).
func NewHider(values ...string) *Hider {
	h := &Hider{}
	for _, v := range values {
		if len(v) >= MinHidden && !slices.Contains(h.values, v) {
			h.values = append(h.values, v)
			h.longest = max(h.longest, len(v))
			h.first[v[0]] = true
		}
	}
	slices.SortFunc(h.values, func(a, b string) int { return len(b) - len(a) })
	return h
}

// Hide is s with every secret of h replaced by Redacted. A nil Hider hides
// nothing.
func (h *Hider) Hide(s string) string {
	if h == nil {
		return s
	}
	for _, v := range h.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

// pending is the length of the longest end of s that may be the start of
// a secret, which the next write may complete.
func (h *Hider) pending(s string) int {
	for i := max(0, len(s)-h.longest+1); i < len(s); i++ {
		if !h.first[s[i]] {
			continue
		}
		for _, v := range h.values {
			if len(v) > len(s)-i && strings.HasPrefix(v, s[i:]) {
				return len(s) - i
			}
		}
	}
	return 0
}

// Writer is w with h's secrets taken out of what is written to it, also
// where a secret is split across writes: the end of a write that may start
// a secret is held until the next write (or Flush) says whether it does.
func (h *Hider) Writer(w io.Writer) *HidingWriter { return &HidingWriter{h: h, w: w} }

// HidingWriter is a Hider's Writer.
type HidingWriter struct {
	mu   sync.Mutex
	h    *Hider
	w    io.Writer
	held string
}

// Write writes p with the secrets hidden, keeping back what may be the
// start of one.
func (hw *HidingWriter) Write(p []byte) (int, error) {
	if hw.h == nil || len(hw.h.values) == 0 {
		return hw.w.Write(p)
	}
	hw.mu.Lock()
	defer hw.mu.Unlock()
	s := hw.h.Hide(hw.held + string(p))
	keep := hw.h.pending(s)
	hw.held = s[len(s)-keep:]
	if out := s[:len(s)-keep]; out != "" {
		if _, err := io.WriteString(hw.w, out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what was held back: the start of a secret that never came
// whole is shown as Redacted when it is long enough to tell.
func (hw *HidingWriter) Flush() error {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	held := hw.held
	hw.held = ""
	if held == "" {
		return nil
	}
	if len(held) >= MinHidden {
		held = Redacted
	}
	_, err := io.WriteString(hw.w, held)
	return err
}
