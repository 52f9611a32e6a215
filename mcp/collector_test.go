package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"rootkeeper/mcp/rawio"
)

// A report collector in a process of its own (this test binary, started
// again with collectorEnv): it takes the servers' reports, so that a
// benchmark measuring Rootkeeper's CPU measures Rootkeeper's alone, not the
// reading and parsing of fifty reports a grant as well. The benchmark
// writes "EXPECT N" on the collector's stdin; once every server has
// reported holding N roots, the collector writes one line: when each did,
// in the order of the servers it was given (Unix nanoseconds). Those
// pipes are read and written raw (package rawio), as the servers' are: a
// call through *os.File tells the scheduler, which wakes the runtime's
// monitor thread once a grant and would charge its polling (25-30 wakes,
// 0.15 ms) to Rootkeeper.

// collectorEnv names the socket the collector listens on; collectorNames,
// the servers, comma separated.
const (
	collectorEnv   = "RK_BENCH_COLLECT"
	collectorNames = "RK_BENCH_COLLECT_NAMES"
)

func init() {
	if sock := os.Getenv(collectorEnv); sock != "" {
		os.Exit(runCollector(sock, strings.Split(os.Getenv(collectorNames), ","), os.Stdin, os.Stdout))
	}
}

// held is the last roots report of a server: how many it holds, since when.
type held struct {
	n  int
	at int64
}

func runCollector(sock string, names []string, in io.Reader, out io.Writer) int {
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	type rep struct {
		name string
		h    held
	}
	reps := make(chan rep, 1024)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				sc := bufio.NewScanner(c)
				sc.Buffer(make([]byte, 1<<16), 1<<22)
				for sc.Scan() {
					at := time.Now().UnixNano()
					parts := strings.SplitN(sc.Text(), " ", 3)
					if len(parts) != 3 || parts[1] != "roots" {
						continue
					}
					var uris []string
					json.Unmarshal([]byte(parts[2]), &uris)
					reps <- rep{parts[0], held{len(uris), at}}
				}
			}()
		}
	}()
	fmt.Fprintln(out, "READY")
	expects := make(chan int)
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "EXPECT "))
			if err != nil {
				fmt.Fprintln(os.Stderr, "collector: bad line", sc.Text())
				continue
			}
			expects <- n
		}
		close(expects)
	}()
	last := map[string]held{}
	want := -1
	done := func() bool {
		for _, name := range names {
			if last[name].n != want {
				return false
			}
		}
		return true
	}
	w := bufio.NewWriter(out)
	for {
		select {
		case r := <-reps:
			last[r.name] = r.h
		case n, ok := <-expects:
			if !ok {
				return 0
			}
			want = n
		}
		if want >= 0 && done() {
			for i, name := range names {
				if i > 0 {
					w.WriteByte(' ')
				}
				w.WriteString(strconv.FormatInt(last[name].at, 10))
			}
			w.WriteByte('\n')
			w.Flush()
			want = -1
		}
	}
}

// collector is the benchmark's side of a collector process.
type collector struct {
	sock string
	in   io.WriteCloser
	out  *bufio.Reader
	cmd  *exec.Cmd
}

// startCollector starts a collector for the servers names.
func startCollector(b *testing.B, names []string) *collector {
	b.Helper()
	dir, err := os.MkdirTemp("", "rk")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	c := &collector{sock: filepath.Join(dir, "r.sock")}
	c.cmd = exec.Command(os.Args[0])
	c.cmd.Env = append(os.Environ(), collectorEnv+"="+c.sock, collectorNames+"="+strings.Join(names, ","))
	c.cmd.Stderr = os.Stderr
	in, childIn, out, childOut, err := rawio.Pipes()
	if err != nil {
		b.Fatal(err)
	}
	c.in = in
	c.cmd.Stdin, c.cmd.Stdout = childIn, childOut
	c.out = bufio.NewReader(out)
	if err := c.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	childIn.Close()
	childOut.Close()
	b.Cleanup(func() { c.in.Close(); c.cmd.Wait() })
	if line, err := c.out.ReadString('\n'); err != nil || line != "READY\n" {
		b.Fatalf("the report collector did not start: %q, %v", line, err)
	}
	return c
}

// expect tells the collector that every server is to hold n roots next.
func (c *collector) expect(b *testing.B, n int) {
	if _, err := fmt.Fprintf(c.in, "EXPECT %d\n", n); err != nil {
		b.Fatal(err)
	}
}

// arrivals waits until every server holds what expect said, and returns
// when each did.
func (c *collector) arrivals(b *testing.B) []time.Time {
	line, err := c.out.ReadString('\n')
	if err != nil {
		b.Fatalf("the report collector: %v", err)
	}
	var at []time.Time
	for _, f := range strings.Fields(line) {
		ns, _ := strconv.ParseInt(f, 10, 64)
		at = append(at, time.Unix(0, ns))
	}
	return at
}
