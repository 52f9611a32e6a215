package spot

// Values and texts: a named value, and the secrets inside free text
// (URLs, tokens, pairs, JSON members, connection strings).

import "strings"

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
		eachPair(m, 0, ";", func(name, v string, vs, _ int) {
			name = strings.TrimSpace(name)
			lead := len(v) - len(strings.TrimLeft(v, " \t"))
			v = strings.TrimSpace(v)
			if name != "" && nameStrength(name) != notSecret && !strings.ContainsAny(name, "&?/") {
				sp = append(sp, shift(namedSpans(name, v), vs+lead)...)
			}
		})
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

// eachPair calls fn for each part of s[from:] that is a name=value pair,
// the parts split at any byte of seps: its name and value, where the value
// starts in s and where the part ends.
func eachPair(s string, from int, seps string, fn func(name, value string, valueAt, end int)) {
	for start := from; start <= len(s); {
		end := strings.IndexAny(s[start:], seps)
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		part := s[start:end]
		if name, value, ok := strings.Cut(part, "="); ok {
			fn(name, value, start+len(part)-len(value), end)
		}
		start = end + 1
	}
}
