package spot

import (
	"strconv"
	"strings"
)

// RefPrefix starts every reference the state file keeps in place of a
// secret: "keyring:rootkeeper/" and the secret's keyring user.
const RefPrefix = "keyring:rootkeeper/"

// The kinds of places a secret is sealed from: an env variable's or a
// header's value, a command-line argument, a remote server's URL.
const (
	KindEnv    = "env"
	KindHeader = "header"
	KindArg    = "arg"
	KindURL    = "url"
)

// WholeUser is the keyring user of a secret that is the whole value of
// server's env variable or header name: "SERVER/env/NAME". Its reference is
// the whole value, "keyring:rootkeeper/SERVER/env/NAME".
func WholeUser(server, kind, name string) string { return server + "/" + kind + "/" + name }

// PartUser is the keyring user of the n-th secret sealed from a part of a
// value: "SERVER/arg/N", "SERVER/url/N", or for env variables and headers
// "SERVER/env/NAME/N" (NAME percent-encoded, so that the reference ends
// where its number does).
func PartUser(server, kind, name string, n int) string {
	if kind == KindEnv || kind == KindHeader {
		return server + "/" + kind + "/" + escape(name) + "/" + strconv.Itoa(n)
	}
	return server + "/" + kind + "/" + strconv.Itoa(n)
}

// RefText is the text that stands for the secret of keyring user in a
// value. Inside a URL's userinfo or path (inURL) all of it is
// percent-encoded, so that the URL stays a URL with the same host.
func RefText(user string, inURL bool) string {
	if inURL {
		return escape(RefPrefix + user)
	}
	return RefPrefix + user
}

// Ref is a reference found in a value: v[Start:End] stands for the secret
// the keyring keeps as User.
type Ref struct {
	Start, End int
	User       string
}

// FindRefs finds the references to server's own secrets in v, written as
// they are (keyring:rootkeeper/…) or percent-encoded (in a URL). A value
// that is a reference as a whole ("keyring:rootkeeper/SERVER/env/NAME") is
// one Ref.
func FindRefs(server, v string) []Ref {
	if !strings.Contains(v, "keyring") {
		return nil
	}
	prefix := RefPrefix + server + "/"
	if strings.HasPrefix(v, prefix) {
		if _, n := parsePart(v[len(prefix):]); n == 0 {
			rest := v[len(prefix):]
			if strings.HasPrefix(rest, KindEnv+"/") || strings.HasPrefix(rest, KindHeader+"/") {
				return []Ref{{0, len(v), v[len(RefPrefix):]}}
			}
		}
	}
	var refs []Ref
	for i := 0; i < len(v); {
		j := strings.Index(v[i:], prefix)
		if j < 0 {
			break
		}
		j += i
		if user, n := parsePart(v[j+len(prefix):]); n > 0 {
			refs = append(refs, Ref{j, j + len(prefix) + n, server + "/" + user})
			i = j + len(prefix) + n
			continue
		}
		i = j + len(prefix)
	}
	enc := escape(prefix)
	for i := 0; i < len(v); {
		j := strings.Index(v[i:], enc)
		if j < 0 {
			break
		}
		j += i
		run := j
		for run < len(v) && unreservedOrPercent(v[run]) {
			run++
		}
		raw := percentDecode(v[j:run])
		if user, n := parsePart(raw[len(prefix):]); n > 0 {
			text := escape(raw[:len(prefix)+n])
			if strings.HasPrefix(v[j:], text) {
				refs = append(refs, Ref{j, j + len(text), server + "/" + user})
				i = j + len(text)
				continue
			}
		}
		i = j + len(enc)
	}
	if len(refs) > 1 {
		sortRefs(refs)
	}
	return refs
}

func sortRefs(refs []Ref) {
	for i := 1; i < len(refs); i++ {
		for j := i; j > 0 && refs[j].Start < refs[j-1].Start; j-- {
			refs[j], refs[j-1] = refs[j-1], refs[j]
		}
	}
}

// parsePart reads "arg/N", "url/N", "env/NAME/N" or "header/NAME/N" at the
// start of s (what follows "keyring:rootkeeper/SERVER/"); it returns the
// part and its length, 0 when s starts with none.
func parsePart(s string) (string, int) {
	kind, rest, ok := strings.Cut(s, "/")
	if !ok {
		return "", 0
	}
	n := len(kind) + 1
	switch kind {
	case KindArg, KindURL:
	case KindEnv, KindHeader:
		name := 0
		for name < len(rest) && unreservedOrPercent(rest[name]) {
			name++
		}
		if name == 0 || name == len(rest) || rest[name] != '/' {
			return "", 0
		}
		n += name + 1
		rest = rest[name+1:]
	default:
		return "", 0
	}
	digits := 0
	for digits < len(rest) && digits < 6 && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 {
		return "", 0
	}
	n += digits
	return s[:n], n
}

func unreservedOrPercent(c byte) bool { return unreserved(c) || c == '%' }

func unreserved(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// escape percent-encodes every byte of s but the unreserved ones (RFC 3986).
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte("0123456789ABCDEF"[c>>4])
		b.WriteByte("0123456789ABCDEF"[c&15])
	}
	return b.String()
}

// refLike matches every reference, whatever server's, as it is written or
// percent-encoded, and the variables a host or shell expands (${VAR}):
// what is never a secret itself, so that no rule takes part of one for one.
var refLike = compiled(`keyring:rootkeeper/[^/\s"'<>]+/(?:(?:arg|url)/[0-9]{1,6}|(?:env|header)/[A-Za-z0-9._~%-]+/[0-9]{1,6})|` +
	`keyring%3[Aa]rootkeeper%2[Ff][A-Za-z0-9._~%-]+|\$\{[^}]*\}`)

// isRefText reports whether v is a reference as a whole.
func isRefText(v string) bool { return strings.HasPrefix(v, RefPrefix) }

// mask is v with every reference and ${VAR} overwritten by NUL bytes (the
// same length, so that what is found in it is found in v), or v itself
// when it has none. A value that is a reference or a variable as a whole
// is all NULs.
func mask(v string) string {
	if isRefText(v) && !strings.ContainsAny(v, " \t\n") || wholeVariable(v) {
		return strings.Repeat("\x00", len(v))
	}
	if !strings.Contains(v, "keyring") && !strings.Contains(v, "${") {
		return v
	}
	return refLike().ReplaceAllStringFunc(v, func(s string) string { return strings.Repeat("\x00", len(s)) })
}

// wholeVariable: "$GITHUB_TOKEN", a variable's name (which a shell or
// host expands), not its value.
func wholeVariable(v string) bool {
	if len(v) < 2 || v[0] != '$' {
		return false
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 1 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
