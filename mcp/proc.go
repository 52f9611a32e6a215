package mcp

import (
	"context"
	"encoding/json"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// process is a stdio server's subprocess, known by the id of its process
// group once it has started.
type process struct {
	pid atomic.Int64 // 0 until started
	// hostile hears (once, buffered) why the server was found hostile
	// (see Backlog).
	hostile chan error
	// conn is its connection once started, through which list_changed
	// is sent without the SDK (adapter.tellRootsChanged).
	conn atomic.Pointer[stdioConn]
}

func newProcess() *process { return &process{hostile: make(chan error, 1)} }

// foundHostile records why the server was found hostile.
func (p *process) foundHostile(err error) {
	select {
	case p.hostile <- err:
	default:
	}
}

// PID is the server's process id, 0 if it has not started.
func (p *process) PID() int {
	if p == nil {
		return 0
	}
	return int(p.pid.Load())
}

// stdioTransport starts a stdio server and connects to it (stdioConn),
// learning the pid of the process it starts.
type stdioTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration // see stdioConn.Close
	version   func() string // the session's negotiated protocol version
	proc      *process
	obs       *observed     // a confined server's reach, or nil
	backlog   BacklogLimits // bounds its unanswered requests
	// roots answers its roots/list in the connection (stdioConn.roots).
	roots func(reply func(json.RawMessage, *jsonrpc.Error))
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := startStdio(t.cmd, t.terminate, t.version, t.backlog, t.proc.foundHostile)
	if conn != nil {
		conn.roots = t.roots
		t.proc.conn.Store(conn)
	}
	if p := t.cmd.Process; p != nil {
		t.proc.pid.Store(int64(p.Pid))
	}
	t.obs.start()
	if err != nil {
		return nil, err
	}
	return conn, nil
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
