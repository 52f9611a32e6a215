// Package initlog holds back what the standard logger prints while the
// program's packages initialise, and lets main release it once it runs.
//
// Fyne's lang package logs "Fyne error: Error parsing user locale C" (three
// lines) from its init whenever LANG is C.UTF-8, as on most servers and
// containers. Without this every command, `rootkeeper status` included,
// would start its stderr with them, breaking the promise of one clear line
// per error. Go initialises packages in import-path order as soon as their
// imports are ready, and this one needs only the standard library, so it
// runs before Fyne's. Should that order ever change, nothing is lost: the
// lines are simply printed as before.
package initlog

import (
	"bytes"
	"log"
	"os"
	"strings"
	"sync"
)

var (
	mu   sync.Mutex
	held bytes.Buffer
)

type holder struct{}

func (holder) Write(p []byte) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	return held.Write(p)
}

func init() { log.SetOutput(holder{}) }

// Release points the standard logger back at stderr and writes out what
// was held back, less Fyne's complaint about a locale it cannot parse.
func Release() {
	mu.Lock()
	text := held.String()
	held.Reset()
	mu.Unlock()
	log.SetOutput(os.Stderr)
	if kept := withoutLocaleNoise(text); kept != "" {
		os.Stderr.WriteString(kept)
	}
}

// withoutLocaleNoise drops each "Fyne error: ... user locale" line and the
// "Cause:" and "At:" lines that follow it.
func withoutLocaleNoise(text string) string {
	var out strings.Builder
	dropping := false
	for _, line := range strings.SplitAfter(text, "\n") {
		switch {
		case strings.Contains(line, "Fyne error:") && strings.Contains(line, "user locale"):
			dropping = true
			continue
		case dropping && (strings.Contains(line, "  Cause:") || strings.Contains(line, "  At: ")):
			continue
		}
		dropping = false
		out.WriteString(line)
	}
	return out.String()
}
