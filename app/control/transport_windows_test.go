//go:build windows

package control

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// TestPipeAdmitsTheUserAlone: the control pipe is owned by the user and
// its access list has one entry, allowing the user, and inherits none.
func TestPipeAdmitsTheUserAlone(t *testing.T) {
	dir := tempDir(t)
	serve(t, dir)
	conn, err := rawDial(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := windows.Handle(conn.(interface{ Fd() uintptr }).Fd())
	sd, err := windows.GetSecurityInfo(h, windows.SE_KERNEL_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the pipe's security descriptor: %s", sd)
	user, err := userSID()
	if err != nil {
		t.Fatal(err)
	}
	if owner, _, err := sd.Owner(); err != nil || !windows.EqualSid(owner, user) {
		t.Errorf("owner %v (%v), want the user %v", owner, err, user)
	}
	if ctl, _, err := sd.Control(); err != nil || ctl&windows.SE_DACL_PROTECTED == 0 {
		t.Errorf("the access list is not protected from inheritance: %#x %v", ctl, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		t.Fatalf("no access list (anybody may open the pipe): %v", err)
	}
	if dacl.AceCount != 1 {
		t.Fatalf("%d access entries, want 1 (the user's)", dacl.AceCount)
	}
	var ace *windows.ACCESS_ALLOWED_ACE
	if err := windows.GetAce(dacl, 0, &ace); err != nil {
		t.Fatal(err)
	}
	sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
	if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || !windows.EqualSid(sid, user) {
		t.Errorf("the access entry is type %d for %v, want allowed for the user %v", ace.Header.AceType, sid, user)
	}
}

// TestPipeIsPerStateFolder: each state folder has its pipe, whichever way
// the folder is spelled; another folder's app does not answer.
func TestPipeIsPerStateFolder(t *testing.T) {
	a, b := tempDir(t), tempDir(t)
	serve(t, a)
	if err := Call(context.Background(), b, "ping", nil, nil); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("another state folder's app answered: %v", err)
	}
	name, err := pipeName(a)
	if err != nil || !strings.HasPrefix(name, pipePrefix) || strings.Contains(strings.ToLower(name), strings.ToLower(filepath.Base(a))) {
		t.Fatalf("pipe name %q (%v): want %s and a hash that does not show the folder", name, err, pipePrefix)
	}
	t.Chdir(filepath.Dir(a))
	for _, spelled := range []string{strings.ToUpper(a), strings.ToLower(a), a + `\.`, filepath.Base(a), filepath.Join(a, "..", filepath.Base(a))} {
		var pong string
		if err := Call(context.Background(), spelled, "ping", nil, &pong); err != nil || pong != "pong" {
			t.Errorf("state folder spelled %q: %q %v", spelled, pong, err)
		}
	}
}
