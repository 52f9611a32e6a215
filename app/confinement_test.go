package app

import (
	"errors"
	"testing"
)

// TestConfinementText: the words say confined with the live ABI first,
// else the ABI here, else why not: a server confined by default then runs
// unconfined (roots are advice), one whose confinement was asked for in
// so many words is not started; an unconfined or remote server gets
// "roots are advice". An ABI below the kernel's is said to be capped; a
// cap that is not an ABI on a kernel with Landlock starts no confined
// server, and says so.
func TestConfinementText(t *testing.T) {
	seven := func() (int, error) { return 7, nil }
	two := func() (int, error) { return 2, nil }
	missing := func() (int, error) { return 0, errors.New("cannot confine: no Landlock") }
	badCap := func() (int, error) {
		return 0, errors.New(`cannot confine: ROOTKEEPER_LANDLOCK_ABI="abc" is not a Landlock ABI (1 to 7)`)
	}
	stdio := Server{Name: "fs", Type: TransportStdio, Command: "x", Confine: true}
	required := Server{Name: "strict", Type: TransportStdio, Command: "x", Confine: true, ConfineRequired: true}
	remote := Server{Name: "web", Type: TransportHTTP, URL: "https://example.com", Confine: true}
	for _, tc := range []struct {
		srv      Server
		live     *ServerStatus
		landlock func() (int, error)
		kernel   func() (int, error)
		want     string
	}{
		{stdio, nil, seven, nil, "confined (Landlock ABI 7): its folders read-write, what it needs to run read-only, nothing else; unix sockets only in its folders and where its network allows"},
		{stdio, &ServerStatus{LandlockABI: 5}, seven, nil, "confined (Landlock ABI 5): its folders read-write, what it needs to run read-only, nothing else; unix sockets only in its folders and where its network allows; may signal other programs"},
		{stdio, &ServerStatus{LandlockABI: 9}, seven, nil, "confined (Landlock ABI 9): its folders read-write, what it needs to run read-only, nothing else; unix sockets only in its folders and where its network allows"},
		{required, &ServerStatus{}, missing, nil, "cannot confine: no Landlock; the server is not started"},
		{required, nil, nil, nil, "cannot confine: this build of Rootkeeper has no Landlock support; the server is not started"},
		{stdio, &ServerStatus{}, missing, nil, "not confined here (no Landlock); roots are advice to this server"},
		{stdio, nil, nil, nil, "not confined here (this build of Rootkeeper has no Landlock support); roots are advice to this server"},
		{Server{Name: "open", Type: TransportStdio, Command: "x"}, nil, seven, nil, NotConfined},
		{remote, nil, seven, nil, NotConfined},
		{stdio, nil, seven, seven, "confined (Landlock ABI 7): its folders read-write, what it needs to run read-only, nothing else; unix sockets only in its folders and where its network allows"},
		{stdio, nil, two, seven, "confined (Landlock ABI 2, capped from 7): its folders read-write, what it needs to run read-only, nothing else; unix sockets only in its folders and where its network allows; may signal other programs"},
		{stdio, &ServerStatus{LandlockABI: 3}, seven, seven, "confined (Landlock ABI 3, capped from 7): its folders read-write, what it needs to run read-only, nothing else; unix sockets only in its folders and where its network allows; may signal other programs"},
		{stdio, nil, badCap, seven, `cannot confine: ROOTKEEPER_LANDLOCK_ABI="abc" is not a Landlock ABI (1 to 7); the server is not started`},
		{stdio, nil, missing, missing, "not confined here (no Landlock); roots are advice to this server"},
	} {
		if got := ConfinementText(tc.srv, tc.live, tc.landlock, tc.kernel); got != tc.want {
			t.Errorf("%s live=%v: %q, want %q", tc.srv.Name, tc.live, got, tc.want)
		}
	}
}
