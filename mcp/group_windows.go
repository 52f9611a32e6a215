//go:build windows

package mcp

import (
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Group is a server started by Rootkeeper and everything it starts: on
// Windows, the job object Start put it in, known by the server's pid. Zero
// is no group. A server that could not be put in a job (Start says why
// not) is a group of one: its children may outlive it.
type Group int

// jobs are the job objects of the servers started (Start), by the pid of
// each server, until the group is reaped. Their handles are this process's
// alone: when it exits, however it exits, Windows closes them, and a job
// closed kills every process in it (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE).
var jobs = struct {
	sync.Mutex
	byPID map[int]windows.Handle
}{byPID: map[int]windows.Handle{}}

// adoptJob records job as the group of the server pid. A group left under
// the same pid (a server gone and its pid reused) is closed first, which
// ends what was left in it.
func adoptJob(pid int, job windows.Handle) {
	jobs.Lock()
	defer jobs.Unlock()
	if old, ok := jobs.byPID[pid]; ok {
		windows.CloseHandle(old)
	}
	jobs.byPID[pid] = job
}

// job is the group's job object, if it has one; call with jobs locked.
func (g Group) job() (windows.Handle, bool) {
	h, ok := jobs.byPID[int(g)]
	return h, ok && g > 0
}

// Terminate does nothing: Windows has no signal asking a process without a
// console window to end. The server was asked by the end of its stdin;
// Kill ends it.
func (g Group) Terminate() {}

// Kill ends every process of the group at once.
func (g Group) Kill() {
	if g <= 0 {
		return
	}
	jobs.Lock()
	job, ok := g.job()
	if ok {
		windows.TerminateJobObject(job, 1)
	}
	jobs.Unlock()
	if !ok {
		if p, err := os.FindProcess(int(g)); err == nil {
			p.Kill()
			p.Release()
		}
	}
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                 int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernel int64
	TotalPageFaultCount                            uint32
	TotalProcesses, ActiveProcesses                uint32
	TotalTerminatedProcesses                       uint32
}

// Alive reports whether any process of the group is left. A group without
// a job has nothing to outlive its server.
func (g Group) Alive() bool {
	jobs.Lock()
	defer jobs.Unlock()
	job, ok := g.job()
	if !ok {
		return false
	}
	var info jobAccounting
	if err := windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		return false
	}
	return info.ActiveProcesses > 0
}

// release closes the group's job once it is reaped: what is still in it
// ends with it.
func (g Group) release() {
	jobs.Lock()
	defer jobs.Unlock()
	if job, ok := g.job(); ok {
		windows.CloseHandle(job)
		delete(jobs.byPID, int(g))
	}
}
