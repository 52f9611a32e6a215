package spot

// URLs: their userinfo, secret query values and path tokens.

import "strings"

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
	eachPair(u, start, "&#;", func(name, value string, vs, end int) {
		if value == "" {
			return
		}
		plain := percentDecode(strings.ReplaceAll(value, "+", " "))
		var secret bool
		switch nameStrength(percentDecode(name)) {
		case strong, weak:
			secret = !plainValue(plain)
		default:
			secret = Value(plain) || tokenWhole(plain)
		}
		if secret {
			sp = append(sp, Span{Start: vs, End: end})
		}
	})
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
