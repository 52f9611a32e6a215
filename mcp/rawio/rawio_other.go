//go:build !linux

package rawio

import (
	"io"
	"os"
)

// Pipes makes the pipes of a child's stdin and stdout: the ends the child
// gets and ours. The caller closes the child's ends once it has started,
// and stdin and stdout once it is done with them (Wait does not).
func Pipes() (stdin io.WriteCloser, childIn *os.File, stdout io.ReadCloser, childOut *os.File, err error) {
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

// Stdio returns in and out as given (rawio_linux.go reads and writes
// pipes raw).
func Stdio(in io.Reader, out io.Writer) (_ io.Reader, _ io.Writer, end func()) {
	return in, out, func() {}
}

// Interrupts reports false: a Close here is not known to end a read
// waiting on the file (rawio_linux.go's readers are).
func Interrupts(io.Reader) bool { return false }
