// Command nosy is a server for the confinement tests that ignores its
// roots: it reads, lists and writes whatever it is told to, wherever that
// is.
//
// With -try it does the operations given as arguments (read:PATH,
// list:PATH, write:PATH, mkdir:PATH, readat:PATH (the file opened relative
// to a descriptor of its folder; a relative PATH is relative to the working
// folder), exec:PATH (runs it), connect:SOCKET, socketpair:stream|dgram, flood:DIR:N (N distinct
// paths in DIR opened one after the other)), prints one JSON line per operation
// ({"op":..,"path":..,"ok":..,"err":..}) and exits. Without it, it is an MCP
// server on stdio whose tool "try" ({"op":"read","path":"/x"}) does one
// operation and answers with the same JSON. With -linger FILE it ignores
// SIGTERM and the end of its stdin, and exits only once FILE is gone (or
// it is killed): a server that holds on to what it could reach. With
// -probe DIR,DIR it lists those folders before it serves.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type result struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	OK   bool   `json:"ok"`
	Err  string `json:"err,omitempty"`
	// Got is what was read or listed.
	Got string `json:"got,omitempty"`
}

func try(op, path string) result {
	r := result{Op: op, Path: path}
	var err error
	switch op {
	case "read":
		var b []byte
		b, err = os.ReadFile(path)
		r.Got = string(b)
	case "list":
		var es []os.DirEntry
		es, err = os.ReadDir(path)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		r.Got = strings.Join(names, ",")
	case "write":
		err = os.WriteFile(path, []byte("nosy was here\n"), 0o644)
	case "mkdir":
		err = os.Mkdir(path, 0o755)
	case "readat": // DIR/NAME: NAME opened relative to a descriptor of DIR
		r.Got, err = readAt(path)
	case "chdirread": // DIR/NAME: NAME read relative to the working folder, moved to DIR
		r.Got, err = chdirRead(path)
	case "connect": // a named unix socket; "@NAME" an abstract one
		var c net.Conn
		c, err = net.Dial("unix", path)
		if err == nil {
			r.Got = "connected"
			c.Close()
		}
	case "tcp": // HOST:PORT
		var c net.Conn
		c, err = net.Dial("tcp", path)
		if err == nil {
			c.Close()
		}
	case "socketpair": // "stream" or "dgram": a connected pair that works
		err = pair(path)
	case "flood": // DIR:N: opens N distinct paths DIR/flood-I (missing, as a prober's are)
		r.Got, err = flood(path)
	default:
		var known bool
		if r.Got, known, err = call(op, path); !known {
			err = fmt.Errorf("unknown op %q", op)
		}
	}
	r.OK = err == nil
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// flood opens N distinct paths in DIR (spec "DIR:N"), one after the other,
// and says how each ended: "N missing, N refused, N opened, N other".
func flood(spec string) (string, error) {
	i := strings.LastIndexByte(spec, ':')
	n, err := strconv.Atoi(spec[i+1:])
	if i < 0 || err != nil || n < 0 {
		return "", fmt.Errorf("flood wants DIR:N, not %q", spec)
	}
	var missing, refused, opened, other int
	for k := range n {
		f, err := os.Open(fmt.Sprintf("%s/flood-%d", spec[:i], k))
		switch {
		case err == nil:
			opened++
			f.Close()
		case errors.Is(err, fs.ErrNotExist):
			missing++
		case errors.Is(err, fs.ErrPermission):
			refused++
		default:
			other++
		}
	}
	return fmt.Sprintf("%d missing, %d refused, %d opened, %d other", missing, refused, opened, other), nil
}

// pair makes a unix socket pair of kind ("stream" or "dgram") and sends a
// byte across it.
func pair(kind string) error {
	typ := syscall.SOCK_STREAM
	if kind == "dgram" {
		typ = syscall.SOCK_DGRAM
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, typ|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socketpair", err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	if _, err := syscall.Write(fds[0], []byte{'x'}); err != nil {
		return err
	}
	b := make([]byte, 1)
	if n, err := syscall.Read(fds[1], b); err != nil || n != 1 || b[0] != 'x' {
		return fmt.Errorf("read %d %q: %v", n, b, err)
	}
	return nil
}

func main() {
	once := flag.Bool("try", false, "do the operations in the arguments and exit")
	linger := flag.String("linger", "", "ignore SIGTERM and stdin's end while this file exists")
	probe := flag.String("probe", "", "list these folders (comma-separated) before serving, as servers that look around at start do")
	flag.Parse()
	if *probe != "" {
		for _, dir := range strings.Split(*probe, ",") {
			os.ReadDir(dir) // what it finds does not matter; that it looked does
		}
	}
	if *linger != "" {
		signal.Ignore(syscall.SIGTERM)
		defer func() {
			for {
				if _, err := os.Stat(*linger); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	if *once {
		enc := json.NewEncoder(os.Stdout)
		for _, a := range flag.Args() {
			op, path, _ := strings.Cut(a, ":")
			enc.Encode(try(op, path))
		}
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "nosy", Version: "1.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "try", InputSchema: json.RawMessage(`{"type":"object","properties":{"op":{"type":"string"},"path":{"type":"string"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Op, Path string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			data, _ := json.Marshal(try(in.Op, in.Path))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
	}
}
