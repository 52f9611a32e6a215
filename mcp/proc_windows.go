//go:build windows

package mcp

import (
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// setProcessGroup starts the server without a console window: a console
// program (node, python, a Go server) started by one without a console, as
// the app and the bridge are, would otherwise open a window of its own.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NO_WINDOW}
}

// group is the server's job (none until it has started).
func (p *process) group() Group { return Group(p.PID()) }

// StartServer starts a server's command (from StdioCommand) in a job object
// of its own: what it starts is in the job too, Group(pid).Kill ends them
// all, and when Rootkeeper exits, however it exits, Windows closes the job
// and ends them (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE): the Windows twin of a
// process group, a subreaper and a parent-death signal. The server starts
// suspended and runs once it is in the job, so that nothing it starts can
// leave before. Where no job can be made, it runs without one.
func StartServer(cmd *exec.Cmd) error {
	job, err := newKillOnCloseJob()
	if err != nil {
		return cmd.Start()
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return err
	}
	pid := cmd.Process.Pid
	// The process is suspended and cmd holds a handle to it: its pid is
	// its own until cmd.Wait.
	assigned := assignToJob(job, pid) == nil
	if err := resumeProcess(pid); err != nil {
		windows.CloseHandle(job)
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("cannot resume %s after putting it in a job: %w", cmd.Path, err)
	}
	if !assigned {
		windows.CloseHandle(job)
		return nil
	}
	adoptJob(pid, job)
	return nil
}

// newKillOnCloseJob makes a job object that ends its processes when its
// last handle is closed.
func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// assignToJob puts process pid in job.
func assignToJob(job windows.Handle, pid int) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(p)
	return windows.AssignProcessToJobObject(job, p)
}

// resumeProcess resumes the threads of process pid, started suspended: its
// first thread, the only one it has then. (os/exec keeps no handle to it.)
func resumeProcess(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != uint32(pid) {
			continue
		}
		t, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(t)
		windows.CloseHandle(t)
		if err != nil {
			return err
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("no thread of process %d found", pid)
	}
	return nil
}
