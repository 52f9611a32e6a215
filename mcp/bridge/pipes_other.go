//go:build !linux

package bridge

import (
	"io"
	"os"
)

// serverPipes makes the pipes of a server's stdin and stdout: the ends the
// child gets and the bridge's. The caller closes the child's ends once it
// has started.
func serverPipes() (stdin io.WriteCloser, childIn *os.File, stdout io.ReadCloser, childOut *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, nil, err
	}
	return inW, inR, outR, outW, nil
}

// hostSide returns how the bridge reads the host's in and writes its out:
// as given (pipes_linux.go reads and writes pipes raw).
func hostSide(in io.Reader, out io.Writer) (io.Reader, io.Writer, func()) {
	return in, out, func() {}
}
