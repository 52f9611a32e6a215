// Package spot recognises secrets in a server's command line and URL:
// the value after a flag such as --api-key, --token or --password (also
// written --flag=VALUE or NAME=VALUE), values in the formats of the big
// providers' keys (sk-…, ghp_…, xoxb-…), long high-entropy tokens, and URL
// query values named api_key, token, key, access_token and the like.
//
// It is the one place that says what a secret looks like there: app/secrets
// seals what it finds into the keyring, and app.Program hides what is
// still in the state file wherever a configuration is printed. It depends
// on the standard library only, so that app can import it.
package spot

import (
	"math"
	"regexp"
	"slices"
	"strings"
)

// Known matches values that are credentials whatever they are called: the
// well-known token formats of the big providers.
var Known = regexp.MustCompile(`^(Bearer\s+\S|Basic\s+\S|sk-[A-Za-z0-9_-]{16,}|sk-ant-|sk-proj-|sk_live_|rk_live_|ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|xox[abepr]-|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,})`)

// secretFlag matches the names of flags, variables and query parameters
// whose value is a credential: api-key, apikey, token, access_token,
// secret, client-secret, password, passwd, pass, passphrase, pat, key,
// private-key, credentials, as a whole name or its last word.
var secretFlag = regexp.MustCompile(`(?i)(^|[-_.])(api[-_]?key|apikey|token|access[-_]?token|auth[-_]?token|refresh[-_]?token|bearer|secret|client[-_]?secret|password|passwd|pass|passphrase|pat|key|private[-_]?key|access[-_]?key|credentials?)$`)

// SecretName reports whether a flag, variable or query parameter called
// name (leading dashes ignored) holds a credential.
func SecretName(name string) bool {
	return secretFlag.MatchString(strings.TrimLeft(name, "-"))
}

// Value reports whether v looks like a credential by itself: a known
// provider format, or a long high-entropy token.
func Value(v string) bool {
	if v == "" || strings.Contains(v, "${") || strings.HasPrefix(v, "keyring:") {
		return false
	}
	return Known.MatchString(v) || highEntropy(v)
}

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

// pathLike: a value that names a file (--private-key ~/.ssh/id) is not the
// secret itself.
func pathLike(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../")
}

// Arg is a secret found on a command line: args[Index] is Prefix, the
// secret, then Suffix.
type Arg struct {
	Index          int
	Prefix, Suffix string
}

// Secret is the secret part of arg.
func (a Arg) Secret(arg string) string {
	return arg[len(a.Prefix) : len(arg)-len(a.Suffix)]
}

// Args finds the secrets in a server's arguments: the value after a secret
// flag (`--api-key VALUE`), the value of `--api-key=VALUE` or
// `API_KEY=VALUE`, and any argument or `NAME=VALUE` value that looks like a
// credential by itself (Value). Values that name a file, refer to a
// variable (${X}) or are keyring references are not secrets.
func Args(args []string) []Arg {
	var found []Arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.Contains(a, "://") {
			// A URL: its query's secrets, from the first to the last.
			if q := Query(a); len(q) > 0 {
				found = append(found, Arg{Index: i, Prefix: a[:q[0][0]], Suffix: a[q[len(q)-1][1]:]})
			}
			continue
		}
		if name, value, ok := strings.Cut(a, "="); ok && name != "" && !strings.ContainsAny(name, " /") {
			if value != "" && !pathLike(value) && (SecretName(name) && !strings.Contains(value, "${") || Value(value)) && !strings.HasPrefix(value, "keyring:") {
				found = append(found, Arg{Index: i, Prefix: name + "="})
			}
			continue
		}
		if strings.HasPrefix(a, "-") && SecretName(a) && i+1 < len(args) {
			v := args[i+1]
			if v != "" && !strings.HasPrefix(v, "-") && !pathLike(v) && !strings.Contains(v, "${") && !strings.HasPrefix(v, "keyring:") {
				found = append(found, Arg{Index: i + 1})
				i++
			}
			continue
		}
		if Value(a) {
			found = append(found, Arg{Index: i})
		}
	}
	return found
}

// Query lists the secrets of a URL's query: for each parameter whose name
// says it holds a credential (api_key, token, key, access_token, …) or
// whose value looks like one, the byte range of its value in rawURL. The
// query is read as it is written (no re-encoding), so that replacing those
// ranges keeps everything else byte for byte.
func Query(rawURL string) [][2]int {
	q := strings.IndexByte(rawURL, '?')
	if q < 0 {
		return nil
	}
	end := len(rawURL)
	if h := strings.IndexByte(rawURL[q:], '#'); h >= 0 {
		end = q + h
	}
	var found [][2]int
	start := q + 1
	for start <= end {
		stop := strings.IndexByte(rawURL[start:end], '&')
		if stop < 0 {
			stop = end
		} else {
			stop += start
		}
		pair := rawURL[start:stop]
		if name, value, ok := strings.Cut(pair, "="); ok && value != "" {
			name = unescape(name)
			plain := unescape(value)
			if !strings.HasPrefix(plain, "keyring:") && !strings.Contains(plain, "${") && (SecretName(name) || Value(plain)) {
				vs := start + len(pair) - len(value)
				found = append(found, [2]int{vs, stop})
			}
		}
		start = stop + 1
	}
	return found
}

// unescape decodes a query component, or returns it as it is when it does
// not decode.
func unescape(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func ishex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// Redacted stands for a secret in printed configurations.
const Redacted = "(secret)"

// RedactArgs returns args with every secret Args finds replaced by
// Redacted (args itself is not changed).
func RedactArgs(args []string) []string {
	found := Args(args)
	if len(found) == 0 {
		return args
	}
	out := append([]string(nil), args...)
	for _, f := range found {
		out[f.Index] = f.Prefix + Redacted + f.Suffix
	}
	return out
}

// RedactURL returns rawURL with every secret query value Query finds
// replaced by Redacted.
func RedactURL(rawURL string) string {
	found := Query(rawURL)
	for i := len(found) - 1; i >= 0; i-- {
		rawURL = rawURL[:found[i][0]] + Redacted + rawURL[found[i][1]:]
	}
	return rawURL
}

// HideIn replaces in text (an error naming the URL, say) every secret
// query value of rawURL, a URL with its secrets resolved, by Redacted.
func HideIn(text, rawURL string) string {
	for _, r := range Query(rawURL) {
		if secret := rawURL[r[0]:r[1]]; secret != "" {
			text = strings.ReplaceAll(text, secret, Redacted)
		}
	}
	return text
}

// keyringRef matches a reference app/secrets leaves in an argument or a
// URL in place of a secret (server names hold no '/').
var keyringRef = regexp.MustCompile(`keyring:rootkeeper/[^/]+/(arg|url)/[0-9]+`)

// SameArgs reports whether two command lines are the same but for their
// secrets: a secret and the keyring reference it was sealed into (or
// another secret in its place) compare equal, so that a configuration
// imported again with its key in clear is the same program as the one
// stored with its reference.
func SameArgs(a, b []string) bool {
	return slices.Equal(normalArgs(a), normalArgs(b))
}

// SameURL is SameArgs for URLs.
func SameURL(a, b string) bool {
	return keyringRef.ReplaceAllString(RedactURL(a), Redacted) == keyringRef.ReplaceAllString(RedactURL(b), Redacted)
}

func normalArgs(args []string) []string {
	out := RedactArgs(args)
	for i, a := range out {
		if keyringRef.MatchString(a) {
			if &out[0] == &args[0] {
				out = slices.Clone(out)
			}
			out[i] = keyringRef.ReplaceAllString(a, Redacted)
		}
	}
	return out
}
