package app

import "testing"

func TestRequestTextFor(t *testing.T) {
	upper := func(s string) string { return "<" + s + ">" }
	for _, c := range []struct {
		r    Request
		name func(string) string
		want string
	}{
		{Request{Server: "claude-code.fs", Path: "/home/ada/Desktop", From: FromCommandLine}, upper, "<claude-code.fs> is configured with ~/Desktop"},
		{Request{Server: "fs", Path: "/home/ada/src/x", From: "claude-code"}, upper, "<claude-code> asks that <fs> see ~/src/x"},
		{Request{Server: "fs", Path: "/srv/x", From: FromCommandLine}, nil, "fs is configured with /srv/x"},
		{Request{Server: "fs", Path: "/home/ada/\u202eevil", From: FromCommandLine}, nil, `fs is configured with ~/\u202eevil`},
	} {
		if got := RequestTextFor(c.r, "/home/ada", c.name); got != c.want {
			t.Errorf("RequestTextFor(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}
