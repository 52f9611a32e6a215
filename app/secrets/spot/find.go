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

// flagName is a, an argument such as -p or --api-key that takes the next
// argument as its value, or "" (a value, a number, --flag=value).
func flagName(a string) string {
	if len(a) < 2 || a[0] != '-' || strings.ContainsRune(a, '=') || strings.ContainsAny(a, " \x00") {
		return ""
	}
	if c := a[1]; c >= '0' && c <= '9' || c == '.' {
		return "" // -1, -0.5
	}
	return a
}

// takesValue: the argument after a flag is its value, not another flag.
func takesValue(v string) bool {
	return v != "" && (v[0] != '-' || len(v) > 1 && (v[1] >= '0' && v[1] <= '9'))
}

func userFlag(flag string) bool {
	switch flag {
	case "-u", "--user", "--username", "-U", "--db-user", "--dbuser":
		return true
	}
	return false
}

func headerFlag(flag string) bool {
	switch flag {
	case "-H", "--header", "--headers", "--http-header", "--extra-header", "--add-header":
		return true
	}
	return false
}

// portLike: a port, a port mapping or an address (docker -p 8080:80,
// -p 127.0.0.1:5432:5432/tcp), never -p's password.
var portRE = compiled(`^[0-9.:\[\]]+(?:/(?:tcp|udp|sctp))?$`)

func portLike(v string) bool { return portRE().MatchString(v) }

// envName matches the NAME of NAME=VALUE arguments.
var envName = compiled(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// headerLine matches "Name: value" and "Name:value".
var headerLine = compiled(`^([A-Za-z][A-Za-z0-9_-]*)[ \t]*:[ \t]*`)

// argSpans finds the secrets of one argument that is not a flag's value.
func argSpans(a string) []Span {
	if a == "" {
		return nil
	}
	if strings.HasPrefix(a, "-") {
		if eq := strings.IndexByte(a, '='); eq > 1 {
			flag, v := a[:eq], a[eq+1:]
			var sp []Span
			switch {
			case headerFlag(flag):
				sp = headerArgSpans(v)
			case nameStrength(flag) != notSecret:
				sp = namedSpans(flag, v)
			default:
				sp = argSpans(v)
			}
			return clean(a, shift(sp, eq+1))
		}
	}
	if name, v, ok := strings.Cut(a, "="); ok && envName().MatchString(name) {
		return clean(a, shift(namedSpans(name, v), len(name)+1))
	}
	if !strings.Contains(a, ":") {
		return textOrWhole(a)
	}
	if loc := headerLine().FindStringSubmatchIndex(a); loc != nil && !strings.HasPrefix(a[loc[1]:], "//") {
		name := a[loc[2]:loc[3]]
		if authHeader(name) || nameStrength(name) != notSecret {
			return clean(a, shift(headerSpans(name, a[loc[1]:]), loc[1]))
		}
	}
	return textOrWhole(a)
}

// headerArgSpans finds the secret of a header given as an argument
// ("Authorization: Bearer X", "X-API-Key=X").
func headerArgSpans(v string) []Span {
	if loc := headerLine().FindStringSubmatchIndex(v); loc != nil {
		return clean(v, shift(headerSpans(v[loc[2]:loc[3]], v[loc[1]:]), loc[1]))
	}
	if name, val, ok := strings.Cut(v, "="); ok && envName().MatchString(name) {
		return clean(v, shift(headerSpans(name, val), len(name)+1))
	}
	return textOrWhole(v)
}

func authHeader(name string) bool {
	n := strings.ToLower(name)
	return n == "authorization" || n == "proxy-authorization"
}

// headerSpans finds the secrets of header name's value v (masked).
func headerSpans(name, v string) []Span {
	if v == "" || strings.Trim(v, "\x00") == "" {
		return nil
	}
	if authHeader(name) {
		if loc := authScheme().FindStringSubmatchIndex(v); loc != nil {
			return clean(v, []Span{{Start: loc[4], End: len(v)}})
		}
		return whole(v)
	}
	return namedSpans(name, v)
}

// namedSpans finds the secrets of the value v (masked) of a flag, variable,
// header or JSON member called name.
func namedSpans(name, v string) []Span {
	if v == "" || strings.Trim(v, "\x00") == "" {
		return nil
	}
	st := nameStrength(name)
	if st == notSecret {
		return textOrWhole(v)
	}
	if plainValue(v) {
		return nil
	}
	if i := strings.Index(v, "://"); i > 0 && schemeRE().MatchString(v[:i]) {
		if sp := clean(v, urlSpans(v)); len(sp) > 0 {
			return sp
		}
		if st == strong {
			return whole(v)
		}
		return nil
	}
	if pathLike(v) {
		return nil
	}
	if loc := knownScheme().FindStringIndex(v); loc != nil {
		return clean(v, []Span{{Start: loc[1] - 1, End: len(v)}})
	}
	if colonName(name) && !strings.ContainsAny(v, " \t") {
		if i := strings.IndexByte(v, ':'); i > 0 && i < len(v)-1 {
			return clean(v, []Span{{Start: i + 1, End: len(v)}})
		}
	}
	// A structured value (JSON, a DSN, pairs) has its secrets inside it.
	if strings.ContainsAny(v, " =,;{@") {
		if sp := textSpans(v); len(sp) > 0 {
			return sp
		}
	}
	// token=abc,toolsets=repos: the value ends where the next pair starts.
	if loc := nextPair().FindStringIndex(v); loc != nil {
		v = v[:loc[0]]
	}
	if st == strong || credential(v) {
		return whole(v)
	}
	return nil
}

// nextPair matches where a list of name=value pairs goes on after a value.
var nextPair = compiled(`,[A-Za-z_][A-Za-z0-9_.-]*=`)

// textOrWhole finds the secrets inside v (textSpans), or v whole when it
// is a token by itself.
func textOrWhole(v string) []Span {
	if sp := textSpans(v); len(sp) > 0 {
		return sp
	}
	if Value(v) {
		return whole(v)
	}
	return nil
}

var (
	schemeRE = compiled(`^[A-Za-z][A-Za-z0-9+.-]*$`)
	// urlRE matches URLs inside a text.
	urlRE = compiled(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>\\]+`)
	// goDSN matches the password of a Go MySQL DSN, user:pass@tcp(host).
	goDSN = compiled(`(?:^|[\s"'=])[A-Za-z0-9_.-]+:([^@\s/]+)@(?:tcp|unix|udp)\(`)
	// pairRE matches name=value in a text (a command line in one string,
	// a URL's query elsewhere).
	pairRE = compiled(`(?:^|[\s,&?])(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)=([^\s,&;"']+)`)
	// webhook matches the URLs of Slack's and Discord's webhooks; group 1
	// is their token.
	webhook = compiled(`^https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/(?:[A-Za-z0-9]+/)+|(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/)([A-Za-z0-9_-]{20,})/?$`)
	// flagInText matches "--flag value" inside a text.
	flagInText = compiled(`(?:^|\s)(--?[A-Za-z][A-Za-z0-9_-]*)[ \t]+([^\s"'-][^\s"']*)`)
	// jsonPair matches a JSON member whose value is a string.
	jsonPair = compiled(`"([^"\\]{1,64})"\s*:\s*"((?:[^"\\]|\\.)*)"`)
)

// textSpans finds the secrets inside a text (masked): URLs' secrets, the
// providers' token formats, JWTs and private keys, credentials after
// Bearer or Basic, name=value pairs and JSON members whose name says they
// are credentials, connection strings' Password=.
func textSpans(m string) []Span {
	if len(m) < 6 {
		return nil
	}
	var sp []Span
	if strings.Contains(m, "://") {
		for _, loc := range urlRE().FindAllStringIndex(m, -1) {
			sp = append(sp, shift(urlSpans(m[loc[0]:loc[1]]), loc[0])...)
		}
	}
	for _, loc := range tokens(m) {
		sp = append(sp, Span{Start: loc[0], End: loc[1]})
	}
	if strings.Contains(m, "earer") || strings.Contains(m, "asic") || strings.Contains(m, "EARER") || strings.Contains(m, "ASIC") {
		// "Basic authentication" is prose: only credentials count.
		for _, loc := range schemeAnywhere().FindAllStringSubmatchIndex(m, -1) {
			if c := m[loc[2]:loc[3]]; credential(c) || known(c) {
				sp = append(sp, Span{Start: loc[2], End: loc[3]})
			}
		}
	}
	if strings.Contains(m, "@tcp(") || strings.Contains(m, "@unix(") || strings.Contains(m, "@udp(") {
		for _, loc := range goDSN().FindAllStringSubmatchIndex(m, -1) {
			sp = append(sp, Span{Start: loc[2], End: loc[3]})
		}
	}
	if strings.Contains(m, "=") {
		sp = append(sp, pairSpans(m)...)
	}
	if strings.Contains(m, " -") {
		// A command line in one argument (sh -c "server --token X").
		for _, loc := range flagInText().FindAllStringSubmatchIndex(m, -1) {
			if flag := m[loc[2]:loc[3]]; nameStrength(flag) == strong {
				sp = append(sp, shift(namedSpans(flag, m[loc[4]:loc[5]]), loc[4])...)
			}
		}
	}
	if strings.Contains(m, `":`) || strings.Contains(m, `" :`) {
		for _, loc := range jsonPair().FindAllStringSubmatchIndex(m, -1) {
			name := m[loc[2]:loc[3]]
			if authHeader(name) || nameStrength(name) != notSecret {
				sp = append(sp, shift(headerSpans(name, m[loc[4]:loc[5]]), loc[4])...)
			}
		}
	}
	return clean(m, sp)
}

// pairSpans finds the values of name=value pairs whose name says they are
// credentials: in a connection string (Server=…;User Id=…;Password=X;),
// split at ';', elsewhere at spaces, commas and '&'.
func pairSpans(m string) []Span {
	var sp []Span
	if strings.Contains(m, ";") {
		start := 0
		for start <= len(m) {
			end := strings.IndexByte(m[start:], ';')
			if end < 0 {
				end = len(m)
			} else {
				end += start
			}
			part := m[start:end]
			if name, v, ok := strings.Cut(part, "="); ok {
				name = strings.TrimSpace(name)
				vs := start + len(part) - len(v)
				lead := len(v) - len(strings.TrimLeft(v, " \t"))
				v = strings.TrimSpace(v)
				if name != "" && nameStrength(name) != notSecret && !strings.ContainsAny(name, "&?/") {
					sp = append(sp, shift(namedSpans(name, v), vs+lead)...)
				}
			}
			start = end + 1
		}
		return sp
	}
	for _, loc := range pairRE().FindAllStringSubmatchIndex(m, -1) {
		name := m[loc[2]:loc[3]]
		if nameStrength(name) != notSecret {
			sp = append(sp, shift(namedSpans(name, m[loc[4]:loc[5]]), loc[4])...)
		}
	}
	return sp
}

// urlSpans finds the secrets of the URL u (masked), from its scheme on.
func urlSpans(u string) []Span {
	i := strings.Index(u, "://")
	if i < 0 {
		return nil
	}
	var sp []Span
	a := i + 3
	e := len(u)
	if j := strings.IndexAny(u[a:], "/?#"); j >= 0 {
		e = a + j
	}
	if at := strings.LastIndexByte(u[a:e], '@'); at >= 0 {
		user, pass, hasPass := strings.Cut(u[a:a+at], ":")
		if hasPass && pass != "" {
			sp = append(sp, Span{Start: a + len(user) + 1, End: a + at, InURL: true})
		}
		if user != "" && tokenUser(percentDecode(user)) {
			sp = append(sp, Span{Start: a, End: a + len(user), InURL: true})
		}
	}
	pe := len(u)
	if j := strings.IndexAny(u[e:], "?#"); j >= 0 {
		pe = e + j
	}
	// Webhooks whose token is a path segment of no known format.
	if loc := webhook().FindStringSubmatchIndex(u[:pe]); loc != nil {
		sp = append(sp, Span{Start: loc[2], End: loc[3], InURL: true})
	}
	for s := e; s < pe; {
		n := strings.IndexByte(u[s+1:pe], '/')
		end := pe
		if n >= 0 {
			end = s + 1 + n
		}
		if seg := u[s+1 : end]; len(seg) >= 16 && tokenWhole(percentDecode(seg)) {
			sp = append(sp, Span{Start: s + 1, End: end, InURL: true})
		}
		s = end
	}
	if pe < len(u) {
		sp = append(sp, paramSpans(u, pe+1)...)
	}
	return sp
}

// tokenWhole: s is one of the providers' tokens, nothing more.
func tokenWhole(s string) bool {
	t := tokens(s)
	return len(t) == 1 && t[0] == [2]int{0, len(s)}
}

// paramSpans finds the secret values of the parameters of a URL's query
// and fragment, from u[start:] on: those named api_key, token, key,
// access_token, password, sig, exaApiKey… and those that look like a
// credential. The values are taken as written (not decoded), so that
// replacing them keeps everything else byte for byte.
func paramSpans(u string, start int) []Span {
	var sp []Span
	for start <= len(u) {
		stop := strings.IndexAny(u[start:], "&#;")
		if stop < 0 {
			stop = len(u)
		} else {
			stop += start
		}
		pair := u[start:stop]
		if name, value, ok := strings.Cut(pair, "="); ok && value != "" {
			plain := percentDecode(strings.ReplaceAll(value, "+", " "))
			vs := start + len(pair) - len(value)
			var secret bool
			switch nameStrength(percentDecode(name)) {
			case strong, weak:
				secret = !plainValue(plain)
			default:
				secret = Value(plain) || tokenWhole(plain)
			}
			if secret {
				sp = append(sp, Span{Start: vs, End: stop})
			}
		}
		start = stop + 1
	}
	return sp
}

// percentDecode decodes %XX escapes, leaving anything else as it is.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
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
