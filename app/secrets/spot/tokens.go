package spot

import (
	"math"
	"regexp"
	"strings"
	"sync"
)

// knownPrefixes start values that are credentials whatever follows
// (an argument "ghp_x", an env value "xoxb-…").
var knownPrefixes = []string{"sk-ant-", "sk-proj-", "sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_",
	"ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "glpat-", "xoxa-", "xoxb-", "xoxe-", "xoxp-", "xoxr-", "xoxs-",
	"ntn_", "lin_api_", "figd_", "tvly-", "pplx-", "sbp_", "sb_secret_", "sntrys_", "sntryu_", "napi_", "ctx7sk-",
	"dckr_pat_", "glsa_", "gsk_", "pcsk_", "shpat_"}

// known reports whether v is a credential whatever it is called, from its
// first character: a provider's token format or one of their prefixes, or
// an Authorization scheme and its credentials ("Bearer t").
func known(v string) bool {
	if tokenAt(v, 0) > 0 {
		return true
	}
	for _, p := range knownPrefixes {
		if len(v) > len(p) && strings.HasPrefix(v, p) {
			return true
		}
	}
	for _, p := range []string{"Bearer ", "Basic "} {
		if rest, ok := strings.CutPrefix(v, p); ok {
			rest = strings.TrimLeft(rest, " \t")
			return !strings.ContainsAny(rest, " \t") && (credential(rest) || known(rest))
		}
	}
	return false
}

// tokenFormats are the providers' token formats, each matched from a
// word's start inside a longer text ("token=ghp_…", "--header=Authorization:
// Bearer sk-…", a JSON blob), with a body long enough that it is not a word
// of its own. prefix is the literal each starts with ("0" for a digit).
var tokenFormats = []struct{ prefix, body string }{
	// Model providers: OpenAI, Anthropic, OpenRouter (sk-…), Groq,
	// Replicate, Hugging Face, Perplexity.
	{"sk-", `[A-Za-z0-9_-]{16,}`}, {"gsk_", `[A-Za-z0-9]{20,}`}, {"r8_", `[A-Za-z0-9]{20,}`},
	{"hf_", `[A-Za-z0-9]{30,}`}, {"pplx-", `[A-Za-z0-9]{20,}`},
	// Payments: Stripe.
	{"sk_", `(?:live|test)_[A-Za-z0-9]{10,}`}, {"rk_", `(?:live|test)_[A-Za-z0-9]{10,}`}, {"whsec_", `[A-Za-z0-9]{16,}`},
	// Code hosts and registries: GitHub, GitLab, npm, PyPI, Docker Hub.
	{"gh", `[pousr]_[A-Za-z0-9]{16,}`}, {"github_pat_", `[A-Za-z0-9_]{20,}`},
	{"gl", `(?:pat|dt|ptt|rt|oas|soat|cbt|ft)-[A-Za-z0-9_-]{16,}`}, {"glsa_", `[A-Za-z0-9_]{20,}`}, {"glc_", `[A-Za-z0-9+/=_-]{20,}`},
	{"npm_", `[A-Za-z0-9]{30,}`}, {"pypi-", `[A-Za-z0-9_-]{50,}`}, {"dckr_pat_", `[A-Za-z0-9_-]{20,}`},
	// Chat and work tools: Slack, Notion, Linear, Figma, Atlassian,
	// Airtable, Shopify, Telegram bots.
	{"xox", `[abeprs]-[A-Za-z0-9-]{5,}`}, {"xapp-", `[0-9]-[A-Za-z0-9-]{20,}`}, {"ntn_", `[A-Za-z0-9]{30,}`},
	{"secret_", `[A-Za-z0-9]{40,}`}, {"lin_", `(?:api|oauth)_[A-Za-z0-9]{20,}`}, {"figd_", `[A-Za-z0-9_-]{20,}`},
	{"AT", `[AC]TT[A-Za-z0-9_=+/-]{20,}`}, {"pat", `[A-Za-z0-9]{14}\.[a-f0-9]{64}`}, {"shp", `(?:at|ss|ca|pa)_[a-fA-F0-9]{20,}`},
	{"0", `[0-9]{7,9}:AA[A-Za-z0-9_-]{30,}`},
	// Search and scraping: Tavily, Firecrawl, Brave, Apify, Browserbase
	// (Exa's keys are UUIDs: names find them).
	{"tvly-", `[A-Za-z0-9-]{16,}`}, {"fc-", `[0-9a-f]{32}`}, {"BSA", `[A-Za-z0-9_-]{20,}`},
	{"apify_api_", `[A-Za-z0-9]{20,}`}, {"bb_live_", `[A-Za-z0-9_-]{16,}`},
	// Clouds and databases: AWS, Google, Supabase, Neon, Sentry,
	// DigitalOcean, Heroku, Pinecone, Databricks, Context7, PostHog,
	// SendGrid, Mailgun.
	{"AKIA", `[0-9A-Z]{16}`}, {"ASIA", `[0-9A-Z]{16}`}, {"AIza", `[0-9A-Za-z_-]{30,}`}, {"ya29.", `[0-9A-Za-z_-]{20,}`},
	{"GOCSPX-", `[0-9A-Za-z_-]{20,}`}, {"sbp_", `[0-9a-f]{20,}`}, {"sb_secret_", `[A-Za-z0-9_-]{16,}`},
	{"napi_", `[A-Za-z0-9]{30,}`}, {"sntry", `[su]_[A-Za-z0-9_=+/-]{20,}`}, {"do", `[opr]_v1_[a-f0-9]{32,}`},
	{"HRKU-", `[A-Za-z0-9_-]{20,}`}, {"pcsk_", `[A-Za-z0-9_]{20,}`}, {"dapi", `[0-9a-f]{32}`},
	{"ctx7sk-", `[A-Za-z0-9-]{20,}`}, {"phx_", `[A-Za-z0-9]{30,}`}, {"SG.", `[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`},
	{"key-", `[0-9a-f]{32}`},
	// JSON Web Tokens: a header and a payload that are base64url JSON.
	{"eyJ", `[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`},
	// Private keys, also with their line breaks escaped (in JSON).
	{"-----BEGIN", `[A-Z ]*PRIVATE KEY-----(?:.|\n)*?-----END[A-Z ]*PRIVATE KEY-----`},
}

// tokenIndex lists, by a text's byte, the formats that may start with it
// (compiled at the first use, as compiled's expressions are).
var tokenIndex = sync.OnceValue(func() (idx *[256][]*regexp.Regexp) {
	idx = new([256][]*regexp.Regexp)
	for _, f := range tokenFormats {
		re := regexp.MustCompile(`^` + regexp.QuoteMeta(f.prefix) + f.body)
		if f.prefix == "0" {
			re = regexp.MustCompile(`^[0-9]` + f.body)
			for c := '0'; c <= '9'; c++ {
				idx[c] = append(idx[c], re)
			}
			continue
		}
		idx[f.prefix[0]] = append(idx[f.prefix[0]], re)
	}
	return idx
})

// tokens finds the providers' tokens in s: where a word starts (s's start,
// or after anything but a letter or a digit), the formats that start with
// its byte are tried.
func tokens(s string) [][2]int {
	var found [][2]int
	index := tokenIndex()
	for i := 0; i < len(s); i++ {
		if index[s[i]] == nil || i > 0 && alnum(s[i-1]) {
			continue
		}
		if n := tokenAt(s, i); n > 0 {
			found = append(found, [2]int{i, i + n})
			i += n - 1
		}
	}
	return found
}

// tokenAt is the length of the token format s[i:] starts with, or 0.
func tokenAt(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	for _, re := range tokenIndex()[s[i]] {
		if loc := re.FindStringIndex(s[i:]); loc != nil {
			return loc[1]
		}
	}
	return 0
}

// compiled is expr compiled at its first use rather than at start: every
// Rootkeeper process links this package (the bridge a host starts, the
// child that confines a server with a network of its own, each command),
// and compiling these expressions at init took 0.6-1.6 ms of every start
// (GODEBUG=inittrace=1).
func compiled(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

// schemeAnywhere matches an Authorization scheme and its credentials inside
// a text (OPENAPI_MCP_HEADERS='{"Authorization": "Bearer ntn_…"}'). Group 1
// is the credential.
var schemeAnywhere = compiled(`(?:^|[^A-Za-z0-9])(?:[Bb]earer|BEARER|[Bb]asic|BASIC)\s+([A-Za-z0-9._~+/=:-]{8,})`)

// authScheme matches a whole Authorization value "Scheme credentials".
var authScheme = compiled(`^([A-Za-z][A-Za-z0-9_-]*)\s+(\S.*)$`)

// knownScheme matches a value that starts with one of the common
// Authorization schemes (AUTH_HEADER="Bearer …", --token "token ghp_…").
var knownScheme = compiled(`^(?i:bearer|basic|token|bot|apikey|api-key|digest)\s+\S`)

// highEntropy: at least 32 characters of a token's alphabet, letters and
// digits mixed, and more than 4.2 bits of entropy a character, which
// random base62 or base64 has and hex (a commit id), words, paths and
// package names do not.
func highEntropy(v string) bool {
	if len(v) < 32 || len(v) > 1024 {
		return false
	}
	var letters, digits bool
	var counts [128]int
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letters = true
		case c >= '0' && c <= '9':
			digits = true
		case c == '_' || c == '-' || c == '+' || c == '/' || c == '=' || c == '.' || c == '~':
		default:
			return false
		}
		counts[c]++
	}
	if !letters || !digits || strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~") {
		return false
	}
	var h float64
	for _, n := range counts {
		if n > 0 {
			p := float64(n) / float64(len(v))
			h -= p * math.Log2(p)
		}
	}
	return h > 4.2
}

// Value reports whether v looks like a credential by itself: a known
// provider format from its start, or a long high-entropy token.
func Value(v string) bool {
	if v == "" || strings.Contains(v, "${") || isRefText(v) {
		return false
	}
	return known(v) || highEntropy(v)
}

// pathLike: a value that names a file (--private-key ~/.ssh/id,
// GOOGLE_APPLICATION_CREDENTIALS=/home/me/key.json) is not the secret
// itself.
func pathLike(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") ||
		strings.HasPrefix(v, "../") || strings.HasPrefix(v, "file://") || windowsPath(v)
}

func windowsPath(v string) bool {
	return len(v) > 2 && v[1] == ':' && (v[2] == '\\' || v[2] == '/') &&
		(v[0] >= 'A' && v[0] <= 'Z' || v[0] >= 'a' && v[0] <= 'z')
}

// plainValue: values no credential is, whatever they are called: yes/no
// words, nothing.
func plainValue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "false", "yes", "no", "on", "off", "none", "null", "nil", "0", "1", "undefined":
		return true
	}
	return false
}

// credential reports whether v, the value of a name that may or may not
// hold a credential (KEY, --auth, PAT), looks like one: a known format, or
// eight or more characters with no space that mix digits with letters or
// cases, and that do not name a file or a place.
func credential(v string) bool {
	if known(v) || highEntropy(v) {
		return true
	}
	if len(v) < 8 || strings.ContainsAny(v, " \t\n") || pathLike(v) || strings.Contains(v, "://") {
		return false
	}
	var lower, upper, digit bool
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		}
	}
	return digit && (lower || upper) || lower && upper
}

// tokenUser reports whether the user part of a URL's userinfo is itself a
// credential (https://ghp_…@github.com, a Sentry DSN's 32-hex key) rather
// than a name (postgres://postgres:…, ssh://git@…).
func tokenUser(u string) bool {
	if known(u) || highEntropy(u) {
		return true
	}
	if len(u) >= 16 {
		hex := true
		for i := 0; i < len(u); i++ {
			c := u[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				hex = false
				break
			}
		}
		if hex {
			return true
		}
	}
	return len(u) >= 24 && credential(u) && !strings.ContainsAny(u, "@.")
}
