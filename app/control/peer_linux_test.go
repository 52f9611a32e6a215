package control

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rootkeeper/app/apptest"
)

// Another user who reaches the socket anyway (its mode loosened, its
// folder opened) gets no answer: the peer's uid is checked. The owner still
// does. Root can connect to anything, so the other user is nobody, by
// setpriv and python3's socket module. (Run by anyone else, the other
// user cannot be had without privileges: the test is skipped then.)
func TestOtherUsersGetNoAnswer(t *testing.T) {
	if !apptest.Privileged() {
		apptest.Missing(t, "needs root to act as another user")
	}
	// Debian's python3 (.ci/setup installs it), not one in root's home
	// that nobody may not run.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Fatal("/usr/bin/python3 is needed to connect as another user")
	}
	dir := t.TempDir()
	serve(t, dir)
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	sock := filepath.Join(dir, SocketName)
	os.Chmod(sock, 0o777)
	ask := func(asNobody bool) string {
		// The app may hang up on another user at once: a reset or a broken
		// pipe is no answer, as an empty one is.
		script := `import socket,sys
out=b''
try:
    s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'{"op":"ping"}\n')
    while True:
        b=s.recv(4096)
        if not b: break
        out+=b
except (ConnectionResetError, BrokenPipeError):
    pass
sys.stdout.write(out.decode())`
		var out, errOut bytes.Buffer
		cmd := exec.Command(python, "-c", script, sock)
		if asNobody {
			apptest.RunAsNobody(t, cmd)
		}
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("connecting (nobody %t): %v %s", asNobody, err, errOut.String())
		}
		return out.String()
	}
	if got := ask(false); !strings.Contains(got, "pong") {
		t.Fatalf("the owner got %q, want pong", got)
	}
	if got := ask(true); got != "" {
		t.Fatalf("another user got %q, want nothing", got)
	}
}
