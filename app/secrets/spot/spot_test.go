package spot

import (
	"slices"
	"testing"
)

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // the secrets found
	}{
		{[]string{"--api-key", "sk-proj-abc"}, []string{"sk-proj-abc"}},
		{[]string{"--token=xyz", "--password", "hunter2", "-p", "80"}, []string{"xyz", "hunter2"}},
		{[]string{"GITHUB_TOKEN=ghp_x", "--secret", "--verbose"}, []string{"ghp_x"}},
		{[]string{"run", "ghp_0123456789abcdefghij", "xoxb-1-2-3"}, []string{"ghp_0123456789abcdefghij", "xoxb-1-2-3"}},
		{[]string{"aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE"}, []string{"aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE"}},
		{[]string{"--url", "https://x.example/mcp?api_key=s3cret&x=1"}, []string{"s3cret"}},
		// Not secrets: a file named by a key flag, a variable, a commit,
		// package names, paths, ordinary flags.
		{[]string{"--private-key", "~/.ssh/id_ed25519", "--token", "${TOKEN}", "--api-key="}, nil},
		{[]string{"0123456789abcdef0123456789abcdef01234567", "@modelcontextprotocol/server-filesystem", "/home/me/src/some-long-project-name-2024"}, nil},
		{[]string{"--port", "8080", "--key-file", "k.pem", "--tokens", "5", "--monkey", "banana"}, nil},
		{[]string{"--api-key", "keyring:rootkeeper/x/arg/0"}, nil},
	} {
		var got []string
		for _, f := range Args(tc.args) {
			got = append(got, f.Secret(tc.args[f.Index]))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Args(%q) found %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestQueryAndRedact(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://x.example/mcp?api_key=sk-1&region=eu", "https://x.example/mcp?api_key=(secret)&region=eu"},
		{"https://x.example/mcp?access_token=a%2Bb&key=k#frag", "https://x.example/mcp?access_token=(secret)&key=(secret)#frag"},
		{"https://x.example/mcp?q=ghp_0123456789abcdef", "https://x.example/mcp?q=(secret)"},
		{"https://x.example/mcp?region=eu&page=2", "https://x.example/mcp?region=eu&page=2"},
		{"https://x.example/mcp?token=keyring:rootkeeper/w/url/0", "https://x.example/mcp?token=keyring:rootkeeper/w/url/0"},
		{"https://x.example/mcp", "https://x.example/mcp"},
	} {
		if got := RedactURL(tc.url); got != tc.want {
			t.Errorf("RedactURL(%s) = %s, want %s", tc.url, got, tc.want)
		}
	}
	if got := RedactArgs([]string{"--api-key", "sk-1", "--token=t"}); !slices.Equal(got, []string{"--api-key", "(secret)", "--token=(secret)"}) {
		t.Errorf("RedactArgs: %q", got)
	}
}

func TestSameArgsAndURL(t *testing.T) {
	stored := []string{"--api-key", "keyring:rootkeeper/x/arg/0", "--token=keyring:rootkeeper/x/arg/1", "plain"}
	if !SameArgs(stored, []string{"--api-key", "sk-proj-abc", "--token=ghp_x", "plain"}) {
		t.Error("a sealed command line and the same in clear differ")
	}
	if SameArgs(stored, []string{"--api-key", "sk-proj-abc", "--token=ghp_x", "other"}) {
		t.Error("another argument compares equal")
	}
	if !SameURL("https://a.example/mcp?api_key=keyring:rootkeeper/w/url/0&r=1", "https://a.example/mcp?api_key=sk-1&r=1") {
		t.Error("a sealed URL and the same in clear differ")
	}
	if SameURL("https://a.example/mcp?api_key=sk-1", "https://b.example/mcp?api_key=sk-1") {
		t.Error("another origin compares equal")
	}
}
