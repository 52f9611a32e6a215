package main

// The calls of the attacks on the boundary (mcp/confine's holes tests):
// each op returns what the kernel (or the filter) answered.

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hole does the attack ops; ok is false for an op it does not know.
func hole(op, path string) (got string, ok bool, err error) {
	wrap := func(name string, e error) error {
		if e == nil {
			return nil
		}
		return &os.PathError{Op: name, Path: path, Err: e}
	}
	switch op {
	case "rdtrunc": // open for reading with O_TRUNC (Linux empties the file)
		var fd int
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_TRUNC|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		err = wrap("open", err)
	case "replace": // create over what is there, emptying it, and write "R"
		err = writeText(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, "R")
	case "truncpath": // truncate(2) by name
		err = wrap("truncate", unix.Truncate(path, 0))
	case "watch": // an inotify watch; got says which watch descriptor
		var fd int
		if fd, err = unix.InotifyInit1(unix.IN_CLOEXEC); err != nil {
			return "", true, wrap("inotify_init1", err)
		}
		defer unix.Close(fd)
		var wd int
		wd, err = unix.InotifyAddWatch(fd, path, unix.IN_ALL_EVENTS)
		got, err = "wd "+strconv.Itoa(wd), wrap("inotify_add_watch", err)
	case "setattr": // file_setattr(2) (Linux 6.17): the no-dump flag, by name
		attr := [24]byte{0x80} // struct file_attr, fa_xflags = FS_XFLAG_NODUMP
		p, _ := unix.BytePtrFromString(path)
		_, _, e := unix.Syscall6(469, atFDCWD, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&attr[0])), 24, 0, 0)
		err = wrap("file_setattr", errOf(e))
	case "setversion": // FS_IOC_SETVERSION on a descriptor opened for reading
		var fd int
		if fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return "", true, wrap("open", err)
		}
		defer unix.Close(fd)
		v := 12345
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), 0x40087602, uintptr(unsafe.Pointer(&v)))
		err = wrap("ioctl", errOf(e))
	case "int80chmod": // chmod through the i386 ABI (int 0x80)
		err = wrap("int 0x80 chmod", foreignChmod(path))
	case "x32chmod": // chmod through the x32 ABI
		err = wrap("x32 chmod", x32Chmod(path))
	case "iouring":
		var params [120]byte
		_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		err = wrap("io_uring_setup", errOf(e))
	case "syscall": // a system call by number, no arguments: path is the number
		n, _ := strconv.Atoi(path)
		_, _, e := unix.Syscall(uintptr(n), 0, 0, 0)
		err = wrap("syscall "+path, errOf(e))
	case "listener": // a seccomp filter with a listener of its own
		prog := []unix.SockFilter{{Code: 0x06, K: 0x7fff0000}}
		fprog := unix.SockFprog{Len: 1, Filter: &prog[0]}
		unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
		if e == 0 {
			unix.Close(int(r))
		}
		err = wrap("seccomp", errOf(e))
	case "mknodblk": // a block device node (the first loop device)
		err = wrap("mknod", unix.Mknod(path, unix.S_IFBLK|0o600, int(unix.Mkdev(7, 0))))
	case "spin": // N calls of getppid: what the filter costs a call it allows
		n, _ := strconv.Atoi(path)
		for range n {
			unix.Getppid()
		}
	case "busy": // N µs on the CPU, no system call: the work between a start's opens
		n, _ := strconv.Atoi(path)
		for end := time.Now().Add(time.Duration(n) * time.Microsecond); time.Now().Before(end); {
		}
	case "tcpecho": // HOST:PORT: connect, send a line, read it back
		got, err = tcpEcho(path)
	case "selfconnect": // listen on loopback inside, and connect to itself
		got, err = selfConnect()
	case "connects": // ADDR,N: N connects, each sending a line and reading the answer; got: ns a connect
		addr, count, _ := strings.Cut(path, ",")
		n, _ := strconv.Atoi(count)
		began := time.Now()
		for range n {
			if _, err = tcpEcho(addr); err != nil {
				break
			}
		}
		if n > 0 {
			got = strconv.FormatInt(time.Since(began).Nanoseconds()/int64(n), 10)
		}
	case "udpsend": // HOST:PORT: one datagram, sent with its address
		err = udpSend(path)
	case "lookup": // NAME: the addresses it resolves to
		var addrs []string
		addrs, err = net.LookupHost(path)
		got = strings.Join(addrs, ",")
	case "rename": // FROM,TO
		from, to, _ := strings.Cut(path, ",")
		err = os.Rename(from, to)
	case "unlink":
		err = os.Remove(path)
	case "symlink": // LINK,TARGET
		link, target, _ := strings.Cut(path, ",")
		err = os.Symlink(target, link)
	case "waitfor": // until PATH exists (watching its folder, which it may read)
		err = waitFor(path)
	case "spawn": // OP:ARG|OP:ARG: another nosy, started now, its results on this one's output
		cmd := exec.Command(os.Args[0], append([]string{"-try"}, strings.Split(path, "|")...)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		err = cmd.Start()
		if err == nil {
			got = "started " + strconv.Itoa(cmd.Process.Pid)
			go cmd.Wait()
		}
	case "pid": // the process that answers
		got = strconv.Itoa(os.Getpid())
	case "truncrace": // LINK,A,B,N: truncate LINK while it is swapped between A and B
		got, err = truncRace(path)
	case "watchrace": // LINK,A,B,N: watch LINK while it is swapped; got: distinct watches
		got, err = watchRace(path)
	default:
		return netOp(op, path)
	}
	return got, true, err
}

func errOf(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func writeText(path string, flags int, text string) error {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte(text))
	return err
}

// lowString is s, NUL-terminated, in memory below 4 GiB, where a 32-bit
// system call can name it.
func lowString(s string) (uintptr, func(), error) {
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|mapBelow4G)
	if err != nil {
		return 0, nil, err
	}
	copy(mem, s)
	mem[len(s)] = 0
	return uintptr(unsafe.Pointer(&mem[0])), func() { unix.Munmap(mem) }, nil
}

// race parses LINK,A,B,N and swaps LINK between A and B (a new link
// renamed over it) until stop is closed.
func race(spec string) (link, a, b string, n int, swap func(stop <-chan struct{}), err error) {
	parts := strings.Split(spec, ",")
	if len(parts) != 4 {
		return "", "", "", 0, nil, fmt.Errorf("want LINK,A,B,N, got %q", spec)
	}
	link, a, b = parts[0], parts[1], parts[2]
	n, err = strconv.Atoi(parts[3])
	tmp := filepath.Join(filepath.Dir(link), ".swap")
	// The link is there before the race begins: on a loaded machine the
	// swapping thread may not run at all before the other has made its n
	// calls, which would then race with nothing but a missing name.
	if err == nil {
		err = os.Symlink(a, link)
	}
	swap = func(stop <-chan struct{}) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			target := a
			if i%2 == 1 {
				target = b
			}
			os.Remove(tmp)
			if os.Symlink(target, tmp) == nil {
				os.Rename(tmp, link)
			}
		}
	}
	return link, a, b, n, swap, err
}

// truncRace truncates LINK n times while another thread swaps it.
func truncRace(spec string) (string, error) {
	link, _, _, n, swap, err := race(spec)
	if err != nil {
		return "", err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { swap(stop) })
	var done atomic.Int64
	for range n {
		if unix.Truncate(link, 0) == nil {
			done.Add(1)
		}
	}
	close(stop)
	wg.Wait()
	return "truncated " + strconv.FormatInt(done.Load(), 10), nil
}

// watchRace watches LINK n times while another thread swaps it, and says
// how many distinct watches it got (one per folder watched).
func watchRace(spec string) (string, error) {
	link, _, _, n, swap, err := race(spec)
	if err != nil {
		return "", err
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { swap(stop) })
	wds := map[int]bool{}
	for range n {
		if wd, err := unix.InotifyAddWatch(fd, link, unix.IN_CREATE); err == nil {
			wds[wd] = true
		}
	}
	close(stop)
	wg.Wait()
	// What is watched, as the kernel lists it: "inotify wd:1 ino:… sdev:…".
	info, _ := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	var inodes []string
	for _, line := range strings.Split(string(info), "\n") {
		for _, field := range strings.Fields(line) {
			if ino, ok := strings.CutPrefix(field, "ino:"); ok && strings.HasPrefix(line, "inotify") {
				inodes = append(inodes, ino)
			}
		}
	}
	return "watches " + strconv.Itoa(len(wds)) + " inodes " + strings.Join(inodes, ","), nil
}

// atFDCWD is AT_FDCWD as a system call argument.
var atFDCWD = func() uintptr { v := int64(unix.AT_FDCWD); return uintptr(v) }()

func tcpEcho(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return echoLine(c)
}

func selfConnect() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Write([]byte("inside\n"))
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return "", err
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

func udpSend(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	return os.NewSyscallError("sendto", unix.Sendto(fd, []byte("leak"), 0, &unix.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())}))
}

// waitFor returns once path exists, watching the folder it is to be made
// in (no polling).
func waitFor(path string) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	for {
		if _, err := os.Lstat(path); err == nil {
			return nil
		}
		if _, err := unix.Read(fd, buf); err != nil {
			return err
		}
	}
}
