package confine

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRuntimesRunConfined: the runtimes servers are written for start and
// run confined, found as a server would find them (PATH, shims of version
// managers): node, python3 and the shell.
func TestRuntimesRunConfined(t *testing.T) {
	needLandlock(t)
	for _, tc := range []struct{ name, code string }{
		{"node", "console.log('ok ' + require('os').cpus().length)"},
		{"python3", "import json, os, tempfile; print('ok', len(json.dumps({})), os.path.isdir(tempfile.gettempdir()))"},
		{"sh", "echo ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, err := exec.LookPath(tc.name)
			if err != nil {
				t.Fatalf("%s is not installed: %v", tc.name, err)
			}
			flag := "-c"
			if tc.name == "node" {
				flag = "-e"
			}
			cmd := exec.Command(path, flag, tc.code)
			if _, err := Wrap(cmd, Policy{Temp: t.TempDir()}); err != nil {
				t.Fatal(err)
			}
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), "ok") {
				t.Fatalf("%s confined: %v\n%s", path, err, out)
			}
		})
	}
}
