package confine

import (
	"bytes"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
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

// TestRuntimesConnectHanded: node, python3 (a blocking socket, and
// asyncio's, registered with epoll once connecting) and the shell connect
// past a network of their own and talk to the destination. The runtimes
// known to register a socket with epoll only after connecting it are
// handed a socket of the host's network (the peer they see is the
// destination); the shell, not known, is carried by the relay (it sees
// the relay).
func TestRuntimesConnectHanded(t *testing.T) {
	needLandlock(t)
	if ok, why := Isolation(); !ok {
		t.Fatalf("no network of its own here: %s", why)
	}
	echo := startEcho(t, "tcp", "127.0.0.3:0")
	port := strconv.Itoa(echo.l.Addr().(*net.TCPAddr).Port)
	dest := "127.0.0.3:" + port
	for _, tc := range []struct {
		name, prog, code string
		handed           bool
	}{
		{"node", "node", "const s=require('net').connect(" + port + ",'127.0.0.3',()=>s.write('ping\\n'));" +
			"s.on('data',d=>{console.log(d.toString().trim()+' '+s.remoteAddress+':'+s.remotePort);s.end()})", true},
		{"python3", "python3", "import socket; s=socket.create_connection(('127.0.0.3'," + port + ")); s.sendall(b'ping\\n');" +
			"print(s.recv(16).decode().strip(), '%s:%d' % s.getpeername())", true},
		{"python3-asyncio", "python3", "import asyncio\nasync def m():\n r,w=await asyncio.open_connection('127.0.0.3'," + port + ")\n" +
			" w.write(b'ping\\n'); l=await r.readline(); print(l.decode().strip(), '%s:%d' % w.get_extra_info('peername'))\nasyncio.run(m())", true},
		{"bash", "bash", "exec 3<>/dev/tcp/127.0.0.3/" + port + "; echo ping >&3; read l <&3; echo $l", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, err := exec.LookPath(tc.prog)
			if err != nil {
				t.Fatalf("%s is not installed: %v", tc.prog, err)
			}
			flag := "-c"
			if tc.prog == "node" {
				flag = "-e"
			}
			cmd := exec.Command(path, flag, tc.code)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			n := &testNetwork{allow: func(c Contact) bool { return c.Addr.String() == dest }}
			obs := observed(t, cmd, Policy{Temp: t.TempDir()}, n, nil)
			err = cmd.Wait()
			obs.Close()
			got := strings.TrimSpace(out.String())
			if err != nil || !strings.HasPrefix(got, "pong") {
				t.Fatalf("%s connected confined: %v\n%s", path, err, got)
			}
			if peer := strings.TrimSpace(strings.TrimPrefix(got, "pong")); tc.handed && peer != dest {
				t.Errorf("%s sees its peer at %q, want the destination %s (a socket handed)", tc.name, peer, dest)
			}
		})
	}
}

// TestHandablePrograms: a socket is handed to Go programs and to the
// runtimes named, and to no other program.
func TestHandablePrograms(t *testing.T) {
	for prog, want := range map[string]bool{"node": true, "python3": true, "bash": false, "sh": false} {
		path, err := exec.LookPath(prog)
		if err != nil {
			t.Fatalf("%s is not installed: %v", prog, err)
		}
		if prog == "python3" { // a version manager's shim is a script: the program it runs
			out, err := exec.Command(path, "-c", "import sys; print(sys.executable)").Output()
			if err != nil {
				t.Fatal(err)
			}
			path = strings.TrimSpace(string(out))
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := isHandableProgram(real); got != want {
			t.Errorf("isHandableProgram(%s) = %v, want %v", real, got, want)
		}
	}
	if !isHandableProgram("/proc/self/exe") {
		t.Error("this test, a Go program, is not handable")
	}
}
