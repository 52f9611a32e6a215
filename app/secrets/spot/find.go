package spot

import (
	"slices"
	"strings"
)

// Span is a secret found in a value: v[Start:End]. InURL says it is (part
// of) a URL's userinfo or path, where what stands for it must be
// percent-encoded.
type Span struct {
	Start, End int
	InURL      bool
}

// InArgs finds the secrets on a server's command line, for each argument
// (the result has one entry per argument, nil where it has none):
//
//   - the value of a flag whose name says it is a credential (--api-key X,
//     --access-token=X, --password X, --pw=X, --client-secret X,
//     --apiClientSecret X), of `--auth user:pass` only the part after the
//     colon, and of `-p X` after `-u USER` (a port stays);
//   - header arguments (--header "Authorization: Bearer X", -H "X-API-Key:
//     X", an argument "Authorization:Bearer X"): the credential, not the
//     scheme;
//   - NAME=VALUE arguments (docker's -e NAME=VALUE) as env variables are;
//   - anywhere in an argument: URLs' passwords and secret query values,
//     the providers' token formats, JWTs, "Bearer X", connection strings'
//     Password=X, JSON members such as "api_key": "X";
//   - an argument that is a token by itself (sk-…, long random strings).
//
// Paths, variables (${X}, $X), references, ports, model names, versions
// and commit hashes are not secrets.
func InArgs(args []string) [][]Span {
	out := make([][]Span, len(args))
	user := false
	for i := 0; i < len(args); i++ {
		a := mask(args[i])
		if flag := flagName(a); flag != "" {
			if userFlag(flag) {
				user = true
			}
			if i+1 < len(args) && takesValue(args[i+1]) {
				v := mask(args[i+1])
				handled := true
				var sp []Span
				switch {
				case headerFlag(flag):
					sp = headerArgSpans(v)
				case flag == "-p" && user:
					if !portLike(v) && !pathLike(v) {
						sp = whole(v)
					}
				case nameStrength(flag) != notSecret:
					sp = namedSpans(flag, v)
				default:
					handled = false
				}
				if handled {
					out[i+1] = sp
					i++
					continue
				}
			}
			// mysql's -pPASSWORD, after -u USER.
			if user && len(a) > 2 && strings.HasPrefix(a, "-p") && a[1] != '-' && !portLike(a[2:]) {
				out[i] = clean(a, []Span{{Start: 2, End: len(a)}})
			}
			continue
		}
		if strings.HasPrefix(a, "-") {
			if flag, _, ok := strings.Cut(a, "="); ok && userFlag(flag) {
				user = true
			}
		}
		out[i] = argSpans(a)
	}
	return out
}

// InEnv finds the secrets in the value of env variable name: all of it when
// the name says it is a credential (GITHUB_TOKEN, DB_PASSWORD, MYSQL_PWD,
// PGPASSWORD, BRAVE_API_KEY), only the credential of "Bearer X" or of a URL
// (DATABASE_URL=postgres://user:X@host, a Sentry DSN's key), and under any
// name what looks like a credential inside it (JWTs, tokens, connection
// strings' Password=X).
func InEnv(name, value string) []Span { return namedSpans(name, mask(value)) }

// InHeader finds the secrets in the value of header name: of an
// Authorization header the credentials after the scheme (Bearer X), of
// X-API-Key, Cookie, Private-Token… the whole value, of any other what
// looks like a credential inside it.
func InHeader(name, value string) []Span { return headerSpans(name, mask(value)) }

// InURL finds the secrets of a remote server's URL: the password in its
// userinfo (and a user that is a token), tokens in its path
// (mcp.firecrawl.dev/fc-…/v2/mcp), and query values named api_key, token,
// key, exaApiKey… or that look like a credential.
func InURL(rawURL string) []Span {
	m := mask(rawURL)
	if !strings.Contains(m, "://") {
		return textSpans(m)
	}
	return clean(m, urlSpans(m))
}

// whole is all of v, unless v is empty, a yes/no or masked.
func whole(v string) []Span {
	if plainValue(v) {
		return nil
	}
	return clean(v, []Span{{Start: 0, End: len(v)}})
}

// clean drops the spans that are empty or hold a masked byte (a reference
// or a variable), and sorts and merges the rest.
func clean(m string, spans []Span) []Span {
	spans = slices.DeleteFunc(spans, func(s Span) bool {
		return s.End <= s.Start || s.Start < 0 || s.End > len(m) || strings.IndexByte(m[s.Start:s.End], 0) >= 0
	})
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b Span) int { return a.Start - b.Start })
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.Start <= last.End {
			last.End = max(last.End, s.End)
			last.InURL = last.InURL || s.InURL
			continue
		}
		out = append(out, s)
	}
	return out
}

func shift(spans []Span, by int) []Span {
	for i := range spans {
		spans[i].Start += by
		spans[i].End += by
	}
	return spans
}
