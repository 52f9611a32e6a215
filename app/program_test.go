package app

import (
	"strings"
	"testing"
)

// TestProgramID: a launcher counts by package or image, without version;
// a runtime by its script; anything else by its command; a changed folder
// argument or version is the same program, another package is not.
func TestProgramID(t *testing.T) {
	stdio := func(cmd string, args ...string) Server {
		return Server{Name: "s", Type: TransportStdio, Command: cmd, Args: args, Cwd: "/srv/mcp"}
	}
	for _, tc := range []struct {
		srv  Server
		want string
	}{
		{stdio("npx", "-y", "@modelcontextprotocol/server-memory"), "npm @modelcontextprotocol/server-memory"},
		{stdio("npx", "-y", "@modelcontextprotocol/server-memory@2026.8.31"), "npm @modelcontextprotocol/server-memory"},
		{stdio("npx", "-y", "@modelcontextprotocol/server-filesystem@latest", "/home/me/src", "/home/me/docs"), "npm @modelcontextprotocol/server-filesystem"},
		{stdio("bunx", "@modelcontextprotocol/server-memory"), "npm @modelcontextprotocol/server-memory"},
		{stdio(`C:\Program Files\nodejs\npx.cmd`, "-y", "pkg@1"), "npm pkg"},
		{stdio("npx", "--package=@a/b@2", "b-server", "--port", "1"), "npm @a/b"},
		{stdio("npx", "-p", "@a/b", "b-server"), "npm @a/b"},
		{stdio("npm", "exec", "--yes", "--", "pkg@3"), "npm pkg"},
		{stdio("pnpm", "dlx", "pkg"), "npm pkg"},
		{stdio("yarn", "dlx", "pkg@1"), "npm pkg"},
		{stdio("bun", "x", "pkg"), "npm pkg"},
		{stdio("npx", "-y", "github:someone/server#v2"), "npm github:someone/server"},
		{stdio("uvx", "mcp-server-git", "--repository", "/home/me/src/x"), "pypi mcp-server-git"},
		{stdio("uvx", "mcp_server_git==0.6.2"), "pypi mcp-server-git"},
		{stdio("uvx", "--from", "mcp-server-fetch[extra]>=1", "mcp-server-fetch"), "pypi mcp-server-fetch"},
		{stdio("uvx", "--python", "3.12", "mcp-server-time"), "pypi mcp-server-time"},
		{stdio("uvx", "--from", "git+https://github.com/x/y@main", "y"), "pypi git+https://github.com/x/y"},
		{stdio("uv", "tool", "run", "mcp-server-time@1"), "pypi mcp-server-time"},
		{stdio("uv", "--directory", "/opt/weather", "run", "weather.py"), "script /opt/weather/weather.py"},
		{stdio("pipx", "run", "--spec", "mcp-server-x==1", "mcp-server-x"), "pypi mcp-server-x"},
		{stdio("docker", "run", "-i", "--rm", "-e", "GITHUB_TOKEN", "ghcr.io/github/github-mcp-server:v1.2"), "image ghcr.io/github/github-mcp-server"},
		{stdio("docker", "run", "-i", "--rm", "-v", "/home/me/a:/a", "mcp/filesystem", "/a"), "image mcp/filesystem"},
		{stdio("docker", "run", "-it", "--name=x", "docker.io/library/postgres:16@sha256:abc"), "image postgres"},
		{stdio("podman", "run", "--rm", "-i", "localhost:5000/srv"), "image localhost:5000/srv"},
		{stdio("node", "dist/index.js", "/home/me/src"), "script /srv/mcp/dist/index.js"},
		{stdio("node", "--require", "x", "/opt/srv/index.js"), "script /opt/srv/index.js"},
		{stdio("node", "/x/node_modules/@a/b/dist/index.js"), "npm @a/b"},
		{stdio("python3", "-m", "mcp_server_fetch"), "python module mcp_server_fetch"},
		{stdio("python3.12", "-u", "server.py"), "script /srv/mcp/server.py"},
		{stdio("deno", "run", "-A", "npm:pkg@1"), "npm pkg"},
		{stdio("java", "-jar", "/opt/s.jar"), "script /opt/s.jar"},
		{stdio("env", "LOG=1", "npx", "-y", "pkg@2"), "npm pkg"},
		{stdio("cmd", "/c", "npx", "-y", "pkg@2"), "npm pkg"},
		{stdio("mcp-server-git", "--repository", "/home/me/a"), "command mcp-server-git"},
		{stdio("/usr/local/bin/srv"), "command /usr/local/bin/srv"},
		{stdio("./bin/srv"), "command /srv/mcp/bin/srv"},
		// Nothing to go by: the whole command line (strict).
		{stdio("node", "-e", "require('x')"), "runs node -e require('x')"},
		{stdio("npx"), "runs npx"},
		{Server{Name: "web", Type: TransportHTTP, URL: "https://example.com/mcp"}, ""},
	} {
		if got := ProgramID(tc.srv); got != tc.want {
			t.Errorf("ProgramID(%s %q) = %q, want %q", tc.srv.Command, tc.srv.Args, got, tc.want)
		}
	}
	// Different packages, images, scripts are different programs.
	for _, pair := range [][2]Server{
		{stdio("npx", "-y", "@modelcontextprotocol/server-memory"), stdio("npx", "-y", "@someone/server-memory")},
		{stdio("uvx", "mcp-server-git"), stdio("npx", "mcp-server-git")},
		{stdio("docker", "run", "-i", "mcp/github"), stdio("docker", "run", "-i", "evil/github")},
		{stdio("node", "/opt/a/index.js"), stdio("node", "/opt/b/index.js")},
		{stdio("/usr/bin/a"), stdio("/usr/bin/b")},
	} {
		if a, b := ProgramID(pair[0]), ProgramID(pair[1]); a == b {
			t.Errorf("%q and %q are both %q", pair[0].Args, pair[1].Args, a)
		}
	}
}

// A secret on the command line is not in the program's name, which the
// state keeps in clear.
func TestProgramIDHidesSecrets(t *testing.T) {
	srv := Server{Name: "s", Type: TransportStdio, Command: "node", Args: []string{"-e", "x", "--api-key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"}}
	if got := ProgramID(srv); got == "" || strings.Contains(got, "sk-ant") {
		t.Errorf("ProgramID = %q", got)
	}
}
