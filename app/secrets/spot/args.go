package spot

// A command line's arguments: flags that take a credential, header
// arguments, NAME=VALUE, -p after -u.

import "strings"

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
