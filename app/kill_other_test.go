//go:build !unix

package app

import (
	"os"
	"os/exec"
)

// killSelf ends this process at once (TerminateProcess on Windows, with
// exit code 1), as a crash would.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
	select {}
}

// killedHard reports whether a child ended by killSelf.
func killedHard(exit *exec.ExitError) bool { return exit.ExitCode() == 1 }
