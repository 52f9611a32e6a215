package mcp

import (
	"context"
	"os/exec"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// process is a stdio server's subprocess, known by the id of its process
// group once it has started.
type process struct {
	pid atomic.Int64 // 0 until started
}

// PID is the server's process id, 0 if it has not started.
func (p *process) PID() int {
	if p == nil {
		return 0
	}
	return int(p.pid.Load())
}

// stdioTransport wraps the SDK's CommandTransport to learn the pid of the
// process it starts (exec.Cmd.Process is not safe to read from elsewhere
// while the SDK owns the command).
type stdioTransport struct {
	inner *sdk.CommandTransport
	proc  *process
	obs   *observed // a confined server's reach, or nil
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if p := t.inner.Command.Process; p != nil {
		t.proc.pid.Store(int64(p.Pid))
	}
	t.obs.start()
	return conn, err
}

// newCommand builds the command of a stdio server; setProcessGroup puts it
// in its own process group where the OS has them.
func newCommand(name string, args []string, env []string, dir string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = dir
	setProcessGroup(cmd)
	return cmd
}
