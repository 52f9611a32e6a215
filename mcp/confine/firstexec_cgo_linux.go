//go:build linux && cgo

package confine

// A server started from a confined thread of Rootkeeper's (launch_linux.go)
// is forked by os/exec with vfork: the launching thread sits in clone,
// counted by the Go runtime as running Go code, until the child's execve.
// That execve goes to the observer. Were the observer a goroutine, a
// stop-the-world begun meanwhile would wait for the launching thread while
// the observer it waits for is stopped: a hang. So until the launch is
// done, the listener is served by a thread of C that the runtime does not
// stop: it lets go on what the launch does before the exec (Rootkeeper's
// own code: os/exec's opening of /dev/null, say) and the exec itself
// (Landlock decides it: the server's own program is in its ruleset), then
// ends. From then on the observer has the listener, and every later exec
// of the server is seen and asked about like any other call.

/*
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/seccomp.h>

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

struct rk_launch {
	int ctl; // the listener's number comes on it, then the word to end
	pthread_t thread;
};

static void *rk_launch_serve(void *arg) {
	struct rk_launch *l = arg;
	int listener = -1;
	ssize_t n = read(l->ctl, &listener, sizeof listener);
	while (n < 0 && errno == EINTR) n = read(l->ctl, &listener, sizeof listener);
	if (n != sizeof listener || listener < 0) return NULL; // no launch after all
	struct pollfd p[2] = {{.fd = listener, .events = POLLIN}, {.fd = l->ctl, .events = POLLIN}};
	for (;;) {
		p[0].revents = p[1].revents = 0;
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR) continue;
			return NULL;
		}
		if (p[0].revents & POLLIN) {
			struct seccomp_notif n;
			memset(&n, 0, sizeof n);
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0) continue; // ENOENT: its caller is gone
			struct seccomp_notif_resp r;
			memset(&r, 0, sizeof r);
			r.id = n.id;
			r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
			if (n.data.nr == __NR_execve || n.data.nr == __NR_execveat)
				return NULL; // the server's own: what follows is the observer's
			continue;
		}
		if (p[1].revents || (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))) return NULL;
	}
}

static int rk_launch_start(struct rk_launch *l) {
	return pthread_create(&l->thread, NULL, rk_launch_serve, l);
}

static void rk_launch_join(struct rk_launch *l) {
	pthread_join(l->thread, NULL);
}
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// answersFirstExec: the launch's calls are answered by a thread the Go
// runtime does not stop, so a server started from a confined thread has
// its execs seen (filterMode.execUnseen false).
const answersFirstExec = true

// launchServer is what serves the listener while a confined thread
// launches its server.
type launchServer struct {
	l         *C.struct_rk_launch
	ctl, send int
}

// newLaunchServer starts the thread of C that will answer the launch's
// calls. It is made before the launching thread confines itself: a thread
// inherits its creator's Landlock domain and seccomp filter, under which
// the listener's own ioctls are refused. It waits for the listener
// (serve), or for done.
func newLaunchServer() (*launchServer, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	// In C memory: the thread reads it after this call returns, which
	// cgo does not let Go memory be.
	l := (*C.struct_rk_launch)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_rk_launch{}))))
	l.ctl = C.int(p[0])
	if e := C.rk_launch_start(l); e != 0 {
		C.free(unsafe.Pointer(l))
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, fmt.Errorf("a thread to answer the launch: %v", syscall.Errno(e))
	}
	return &launchServer{l: l, ctl: p[0], send: p[1]}, nil
}

// serve hands the thread the listener: it answers its calls until the
// server's exec, or until done.
func (s *launchServer) serve(listener int) error {
	n := int32(listener)
	_, err := unix.Write(s.send, unsafe.Slice((*byte)(unsafe.Pointer(&n)), 4))
	return err
}

// done ends the thread (it has ended already if it answered the exec;
// else it reads the word to end, or finds no listener) and frees it.
func (s *launchServer) done() {
	unix.Write(s.send, []byte{0})
	unix.Close(s.send)
	C.rk_launch_join(s.l)
	C.free(unsafe.Pointer(s.l))
	unix.Close(s.ctl)
}
