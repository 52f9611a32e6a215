package main

// The network ops of the tests of a server's network setting (mcp's
// netwatch tests, the root package's, the benchmarks): what the kernel,
// the filter or Rootkeeper answered.

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

// netOp does the network ops; ok is false for an op it does not know.
func netOp(op, path string) (got string, ok bool, err error) {
	switch op {
	case "udp": // HOST:PORT (IPv4 or [IPv6]): a connected datagram socket sends "leak"
		err = udpTo(path)
	case "names": // SUFFIX:PORT,N: N connects to n0.SUFFIX … n{N-1}.SUFFIX; got: their p50,p99,max in µs and how many failed
		got, err = names(path)
	default:
		return "", false, nil
	}
	return got, true, err
}

func udpTo(addr string) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte("leak"))
	return err
}

// names connects to N names once each, timing each connect (lookup
// included) as the server sees it.
func names(spec string) (string, error) {
	hostPort, count, ok := strings.Cut(spec, ",")
	n, err := strconv.Atoi(count)
	i := strings.LastIndexByte(hostPort, ':')
	if !ok || err != nil || i < 0 {
		return "", fmt.Errorf("names wants SUFFIX:PORT,N, not %q", spec)
	}
	suffix, port := hostPort[:i], hostPort[i+1:]
	took := make([]time.Duration, 0, n)
	failed := 0
	for k := range n {
		start := time.Now()
		c, err := net.DialTimeout("tcp", net.JoinHostPort(fmt.Sprintf("n%d.%s", k, suffix), port), 10*time.Second)
		took = append(took, time.Since(start))
		if err != nil {
			failed++
			continue
		}
		c.Close()
	}
	sort.Slice(took, func(a, b int) bool { return took[a] < took[b] })
	at := func(p float64) int64 { return took[min(len(took)-1, int(p*float64(len(took))))].Microseconds() }
	return fmt.Sprintf("%d,%d,%d,%d", at(0.5), at(0.99), took[len(took)-1].Microseconds(), failed), nil
}
