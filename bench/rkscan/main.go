// Command rkscan is bench/scan.sh's harness for A/B runs of the walk in
// package detect: `rkscan [-workers N] [-cache FILE] DIR...` scans like
// `rootkeeper scan --json` and prints one JSON object per candidate. With
// -cache, the re-scan cache is loaded from FILE when it exists and saved to
// it afterwards, as a later launch of the app would. With -again N it scans
// N more times with the first scan's cache in memory (as the window's
// Discover tab does), printing each scan's time, and then the live heap the
// cache holds.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"rootkeeper/app/atomicfile"
	"rootkeeper/detect"
)

func main() {
	workers := flag.Int("workers", 0, "goroutines reading folders (0: detect's default)")
	cache := flag.String("cache", "", "re-scan cache file, loaded when present and saved after")
	again := flag.Int("again", 0, "scan this many more times with the cache of the first scan (in memory), printing nothing but each scan's time")
	flag.Parse()
	s := detect.Scanner{Workers: *workers}
	if *cache != "" {
		s.Cache = detect.LoadCache(*cache)
	}
	if *again > 0 {
		if s.Cache == nil {
			s.Cache = detect.NewCache()
		}
		for i := 0; i <= *again; i++ {
			start := time.Now()
			if _, err := s.Scan(context.Background(), detect.Request{Dirs: flag.Args()}, nil, nil); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			st := s.Cache.Stats()
			fmt.Printf("scan %d: %.3f s, %d folders reused, %d read\n", i, time.Since(start).Seconds(), st.Reused, st.Read)
		}
		// What holding the cache costs the heap, measured.
		var with, without runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&with)
		st := s.Cache.Stats()
		s.Cache = nil
		runtime.GC()
		runtime.ReadMemStats(&without)
		live := float64(with.HeapAlloc) - float64(without.HeapAlloc)
		fmt.Printf("cache: %d folders, %d bytes counted (%.1f per folder); live heap %.1f MB with it, %.1f MB without (%.1f bytes per folder)\n",
			st.Folders, st.Bytes, float64(st.Bytes)/float64(max(st.Folders, 1)),
			float64(with.HeapAlloc)/(1<<20), float64(without.HeapAlloc)/(1<<20), live/float64(max(st.Folders, 1)))
		return
	}
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	var mu sync.Mutex
	sum, err := s.Scan(context.Background(), detect.Request{Dirs: flag.Args()}, func(c detect.Candidate) {
		mu.Lock()
		enc.Encode(c)
		mu.Unlock()
	}, nil)
	out.Flush()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "%d folders, %d found\n", sum.Visited, sum.Found)
	if s.Cache != nil {
		st := s.Cache.Stats()
		fmt.Fprintf(os.Stderr, "cache: %d reused, %d read; holds %d folders, %d bytes (%.1f per folder)\n",
			st.Reused, st.Read, st.Folders, st.Bytes, float64(st.Bytes)/float64(max(st.Folders, 1)))
		write := func(file string, data []byte) error { return atomicfile.Write(file, data, atomicfile.Options{}) }
		if err := s.Cache.Save(*cache, write); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
