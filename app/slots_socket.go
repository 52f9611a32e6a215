package app

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// A unix socket named in a server's configuration is a slot like a
// folder: MYSQL_SOCKET_PATH=/run/mysqld/mysqld.sock, a PostgreSQL URL's
// ?host=/run/postgresql (libpq's socket folder: the socket is
// .s.PGSQL.PORT in it), a ?socket= of a MySQL URL. It is decided like a
// file slot (the server starts once it is allowed), and an allowed one
// lets the server's connect to that socket through (its network setting
// aside, off excepted): the person allowed what its configuration names.
// A socket the database has not made yet (it is not running) is a slot
// still, when the value says it is one: a path ending in .sock or
// .socket, or a value of a variable whose name says SOCK, in a folder
// that is there.

// socketSlots are the socket slots value names (env is the variable
// holding it, "" for an argument): the value itself, or the sockets a URL
// names in its query.
func socketSlots(value, env, cwd, home string) []Slot {
	if strings.Contains(value, "://") {
		return urlSocketSlots(value, home)
	}
	if p, ok := socketPath(value, cwd, home, strings.Contains(strings.ToUpper(env), "SOCK")); ok {
		return []Slot{{Path: p, Given: value, File: true, Socket: true}}
	}
	return nil
}

// urlSocketSlots are the sockets a database URL names: ?host=DIR (libpq:
// DIR/.s.PGSQL.PORT, PORT from ?port= or the URL, 5432 by default) and
// ?socket=PATH or ?unix_socket=PATH.
func urlSocketSlots(value, home string) []Slot {
	u, err := url.Parse(value)
	if err != nil {
		return nil
	}
	q := u.Query()
	var out []Slot
	if host := q.Get("host"); strings.HasPrefix(host, "/") {
		port := q.Get("port")
		if port == "" {
			port = u.Port()
		}
		if port == "" {
			port = "5432"
		}
		if p, ok := socketPath(filepath.Join(host, ".s.PGSQL."+port), "", home, true); ok {
			out = append(out, Slot{Path: p, Given: host, File: true, Socket: true})
		}
	}
	for _, k := range []string{"socket", "unix_socket"} {
		if v := q.Get(k); strings.HasPrefix(v, "/") {
			if p, ok := socketPath(v, "", home, true); ok {
				out = append(out, Slot{Path: p, Given: v, File: true, Socket: true})
			}
		}
	}
	return out
}

// socketPath reports whether v names a unix socket: a socket file that is
// there, or, when named says so (or the name ends in .sock or .socket),
// one that is not there yet in a folder that is. It returns the path with
// its folder's links resolved.
func socketPath(v, cwd, home string, named bool) (string, bool) {
	p := v
	switch {
	case p == "" || strings.ContainsAny(p, "\x00\n"):
		return "", false
	case strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", false
		}
		p = filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
	case cwd != "" && (strings.HasPrefix(p, ".") || strings.ContainsRune(p, filepath.Separator)):
		p = filepath.Join(cwd, p)
	default:
		return "", false
	}
	p = filepath.Clean(p)
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", false
	}
	p = filepath.Join(dir, filepath.Base(p))
	if fi, err := os.Stat(p); err == nil {
		return p, fi.Mode()&os.ModeSocket != 0
	}
	ext := filepath.Ext(p)
	return p, named || ext == ".sock" || ext == ".socket"
}

// SocketSlotPaths are server's allowed socket slots in snap: the sockets
// its configuration names that the person allowed.
func SocketSlotPaths(snap *Snapshot, server string) []string {
	srv, ok := snap.State.Server(server)
	if !ok {
		return nil
	}
	var out []string
	for _, sl := range srv.Slots {
		if sl.Socket && SlotStateOf(snap, server, sl) == SlotAllowed {
			out = append(out, sl.Path)
		}
	}
	return out
}
