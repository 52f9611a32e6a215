package spot

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"rootkeeper/app/secrets/spot/spottest"
)

// found is what detection finds in a corpus shape: the secret parts and
// the shape as shown.
func found(s spottest.Shape) (secrets []string, shown string) {
	switch s.Kind {
	case spottest.Args:
		sp := InArgs(s.Args)
		for i, a := range s.Args {
			secrets = append(secrets, Parts(a, sp[i])...)
		}
		return secrets, strings.Join(ShowArgs("x", s.Args), " ")
	case spottest.Env:
		sp := InEnv(s.Name, s.Value)
		return Parts(s.Value, sp), Replace(s.Value, sp, Redacted)
	case spottest.Header:
		sp := InHeader(s.Name, s.Value)
		return Parts(s.Value, sp), Replace(s.Value, sp, Redacted)
	}
	sp := InURL(s.Value)
	return Parts(s.Value, sp), Replace(s.Value, sp, Redacted)
}

// The corpus: every secret shape is found, exactly its secret parts, and
// shown with only them hidden; every look-alike is shown as it is.
func TestCorpus(t *testing.T) {
	for _, s := range spottest.Shapes {
		t.Run(s.From+": "+s.Shape, func(t *testing.T) {
			secrets, shown := found(s)
			if !slices.Equal(secrets, s.Secrets) {
				t.Errorf("%s %s %q: found %q, want %q", s.Kind, s.Name, s.Input(), secrets, s.Secrets)
			}
			if shown != s.WantShown() {
				t.Errorf("%s %s %q:\nshown %q\nwant  %q", s.Kind, s.Name, s.Input(), shown, s.WantShown())
			}
		})
	}
	secrets, lookalikes := spottest.Counts()
	t.Logf("corpus: %d secret shapes, %d look-alikes", secrets, lookalikes)
	if secrets < 50 || lookalikes < 40 {
		t.Fatalf("the corpus shrank: %d secret shapes, %d look-alikes", secrets, lookalikes)
	}
}

// Env values: by their names and by what they hold.
func TestInEnv(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"GITHUB_PERSONAL_ACCESS_TOKEN", "x", true},
		{"BRAVE_API_KEY", "abc", true},
		{"OPENAI_APIKEY", "abc", true},
		{"DB_PASSWORD", "pw", true},
		{"Authorization", "Bearer t", true},
		{"X-Api-Key", "k", true},
		{"Cookie", "s=1", true},
		{"AWS_SECRET_ACCESS_KEY", "k", true},
		{"SOME_VAR", "ghp_0123456789abcdef", true},
		{"URL", "sk-ant-api03-xyz", true},
		{"PATH", "/usr/bin", false},
		{"HOME", "/home/me", false},
		{"KEYBOARD_LAYOUT", "us", false},
		{"MONKEY", "banana", false},
		{"DEBUG", "1", false},
		{"GITHUB_TOKEN", "", false},
		{"GITHUB_TOKEN", "${GITHUB_TOKEN}", false},
		{"Authorization", "Bearer ${TOKEN}", false},
		{"GITHUB_TOKEN", RefText(WholeUser("gh", KindEnv, "GITHUB_TOKEN"), false), false},
	} {
		if got := len(InEnv(tc.name, tc.value)) > 0; got != tc.want {
			t.Errorf("InEnv(%q, %q) found a secret: %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}

func TestNameStrength(t *testing.T) {
	for name, want := range map[string]strength{
		"GITHUB_PERSONAL_ACCESS_TOKEN": strong, "--api-key": strong, "--apiClientSecret": strong,
		"exaApiKey": strong, "X-API-Key": strong, "PGPASSWORD": strong, "MYSQL_PWD": strong, "--pw": strong,
		"Authorization": strong, "Cookie": strong, "AWS_SECRET_ACCESS_KEY": strong, "AUTH_HEADER": weak,
		"KEY": weak, "--auth": weak, "GITHUB_PAT": weak, "SENTRY_DSN": weak,
		"MAX_TOKENS": notSecret, "TOKEN_LIMIT": notSecret, "AUTH_URL": notSecret, "--key-file": notSecret,
		"SORT_KEY": notSecret, "STRIPE_PUBLISHABLE_KEY": notSecret, "PWD": notSecret, "MONKEY": notSecret,
		"--api-key-env": notSecret, "SESSION_TIMEOUT": notSecret, "--connectionString": notSecret,
	} {
		if got := nameStrength(name); got != want {
			t.Errorf("nameStrength(%q) = %d, want %d", name, got, want)
		}
	}
}

// References and variables are never secrets themselves, wherever they
// are; and what was found before sealing is found again around them.
func TestReferencesAreNotSecrets(t *testing.T) {
	args := []string{"--api-key", "keyring:rootkeeper/x/arg/0", "--token=keyring:rootkeeper/x/arg/1",
		"postgres://u:" + escape("keyring:rootkeeper/x/arg/2") + "@h/db", "--password", "${PW}", "--token", "$TOKEN"}
	for i, sp := range InArgs(args) {
		if len(sp) > 0 {
			t.Errorf("argument %d %q: found %q", i, args[i], Parts(args[i], sp))
		}
	}
	for _, v := range []string{"keyring:rootkeeper/gh/env/GITHUB_TOKEN", "Bearer keyring:rootkeeper/r/header/Authorization/0"} {
		if sp := InEnv("GITHUB_TOKEN", v); len(sp) > 0 {
			t.Errorf("InEnv(%q) found %q", v, Parts(v, sp))
		}
	}
	if sp := InURL("https://x.example/mcp?token=keyring:rootkeeper/w/url/0"); len(sp) > 0 {
		t.Errorf("a reference in a query: %v", sp)
	}
}

// FindRefs finds a server's references as they are written and
// percent-encoded, and only its own.
func TestFindRefs(t *testing.T) {
	enc := RefText(PartUser("db", KindEnv, "DATABASE_URL", 3), true)
	v := "postgres://u:" + enc + "@h/db?password=" + RefText(PartUser("db", KindEnv, "DATABASE_URL", 4), false) + "&x=keyring:rootkeeper/other/arg/0"
	refs := FindRefs("db", v)
	var users []string
	for _, r := range refs {
		users = append(users, r.User)
	}
	if want := []string{"db/env/DATABASE_URL/3", "db/env/DATABASE_URL/4"}; !slices.Equal(users, want) {
		t.Fatalf("FindRefs = %q, want %q", users, want)
	}
	if got := Replace(v, []Span{{Start: refs[0].Start, End: refs[0].End}, {Start: refs[1].Start, End: refs[1].End}}, "S"); got != "postgres://u:S@h/db?password=S&x=keyring:rootkeeper/other/arg/0" {
		t.Fatalf("spans: %q", got)
	}
	whole := FindRefs("gh", "keyring:rootkeeper/gh/env/GITHUB_TOKEN")
	if len(whole) != 1 || whole[0].User != "gh/env/GITHUB_TOKEN" {
		t.Fatalf("whole reference: %+v", whole)
	}
	if name := PartUser("s p", KindHeader, "X/Y Z", 0); name != "s p/header/X%2FY%20Z/0" {
		t.Fatalf("PartUser = %q", name)
	}
}

// A Hider takes secrets out of a stream even where they are split across
// writes, and holds back no more than may start a secret.
func TestHidingWriter(t *testing.T) {
	const secret = "sk-proj-AbCdEfGhIjKlMnOp"
	var out bytes.Buffer
	w := NewHider(secret, "ab").Writer(&out)
	text := "connecting with " + secret + " to db\nagain " + secret + "\nend sk-pr"
	for i := 0; i < len(text); i += 5 {
		w.Write([]byte(text[i:min(i+5, len(text))]))
	}
	if got := out.String(); strings.Contains(got, secret) || !strings.HasPrefix(got, "connecting with (secret) to db\nagain (secret)\nend ") {
		t.Fatalf("before Flush: %q", got)
	}
	w.Flush()
	if got := out.String(); !strings.HasSuffix(got, "end (secret)") {
		t.Fatalf("after Flush: %q", got)
	}
	out.Reset()
	w.Write([]byte("plain text ab\n"))
	if out.String() != "plain text ab\n" {
		t.Fatalf("a value shorter than MinHidden was hidden, or text held: %q", out.String())
	}
}

// The secrets guide (docs/secrets.md) reports the corpus's numbers as they are.
func TestSecretsGuideReportsTheCorpus(t *testing.T) {
	readme, err := os.ReadFile("../../../docs/secrets.md")
	if err != nil {
		t.Fatal(err)
	}
	secrets, lookalikes := spottest.Counts()
	want := fmt.Sprintf("all **%d secret shapes are sealed, all %d look-alikes are shown as\nthey are**", secrets, lookalikes)
	if !strings.Contains(string(readme), want) {
		t.Errorf("docs/secrets.md does not say %q", want)
	}
}
