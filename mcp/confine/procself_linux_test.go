package confine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestChildrenReadTheirOwnProc: a child of a confined, observed server
// (here a shell started by a shell, as npx or a git server starts one)
// reads its own /proc entry — stat, status, the listing of fd and task —
// by /proc/self and by its pid, while another process's entry stays out
// of reach (the server's parent's, Rootkeeper's own).
func TestChildrenReadTheirOwnProc(t *testing.T) {
	needLandlock(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	script := `sh -c '
cat /proc/self/stat >/dev/null && echo stat-ok
ls /proc/self/fd >/dev/null && echo fd-ok
ls /proc/self/task >/dev/null && echo task-ok
cat /proc/$$/status >/dev/null && echo pid-ok
cat /proc/thread-self/stat >/dev/null && echo thread-ok
cat /proc/` + strconv.Itoa(os.Getpid()) + `/status >/dev/null 2>&1 && echo other-READ
exit 0'`
	cmd := exec.Command(sh, "-c", script)
	_, obs, err := WrapObserved(cmd, Policy{Temp: filepath.Join(t.TempDir(), "tmp")})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := obs.Start(func(context.Context, Attempt) string { return "" }); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	obs.Close()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"stat-ok", "fd-ok", "task-ok", "pid-ok", "thread-ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the child could not do %s:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "other-READ") {
		t.Errorf("the child read another process's /proc entry:\n%s", out.String())
	}
}
