package rawio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// What is written to a child's stdin arrives whole; a full pipe makes
// TryWrite stop with ErrWouldBlock, and Write wait until the child reads;
// a closed writer refuses.
func TestPipesWrite(t *testing.T) {
	stdin, childIn, stdout, childOut, err := Pipes()
	if err != nil {
		t.Fatal(err)
	}
	defer childIn.Close()
	defer childOut.Close()
	defer stdout.Close()
	tw := stdin.(interface{ TryWrite([]byte) (int, error) })
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, more than a pipe holds
	n, err := tw.TryWrite(big)
	if !errors.Is(err, ErrWouldBlock) || n <= 0 || n >= len(big) {
		t.Fatalf("TryWrite into a pipe nobody reads: %d, %v; want part of it and ErrWouldBlock", n, err)
	}
	got := make(chan []byte)
	go func() {
		data, _ := io.ReadAll(childIn)
		got <- data
	}()
	if _, err := stdin.Write(big[n:]); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if data := <-got; !bytes.Equal(data, big) {
		t.Fatalf("the child read %d bytes, not the %d written", len(data), len(big))
	}
	if _, err := stdin.Write([]byte("x")); err == nil {
		t.Fatal("a closed writer wrote")
	}
}

// What a child writes is read; its end is EOF; Close ends a read waiting
// for data that never comes.
func TestPipesRead(t *testing.T) {
	stdin, childIn, stdout, childOut, err := Pipes()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	defer childIn.Close()
	childOut.Write([]byte("hello\n"))
	buf := make([]byte, 64)
	n, err := stdout.Read(buf)
	if err != nil || string(buf[:n]) != "hello\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	waiting := make(chan error, 1)
	go func() {
		_, err := stdout.Read(buf)
		waiting <- err
	}()
	stdout.Close()
	select {
	case err := <-waiting:
		if err == nil {
			t.Fatal("a read after Close returned data")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting read")
	}
	childOut.Close()

	stdin2, childIn2, stdout2, childOut2, err := Pipes()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin2.Close()
	defer childIn2.Close()
	childOut2.Close()
	if _, err := stdout2.Read(buf); err != io.EOF {
		t.Fatalf("read from a closed child end: %v; want EOF", err)
	}
	stdout2.Close()
}

// A file that is neither a pipe nor a socket is used as given.
func TestStdioOfAFile(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, out, end := Stdio(f, f)
	defer end()
	if in != io.Reader(f) || out != io.Writer(f) {
		t.Fatal("a regular file was wrapped")
	}
}
