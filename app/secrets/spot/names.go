package spot

import (
	"strings"
	"unicode"
)

// strength says how sure a name (of a flag, an env variable, a header or a
// query parameter) is that its value is a credential.
type strength int

const (
	// notSecret: the name says nothing (PORT, --model, Accept).
	notSecret strength = iota
	// weak: the name may hold a credential or may not (KEY, --auth,
	// PAT); its value is a secret only if it looks like one (credential).
	weak
	// strong: the name holds a credential (TOKEN, PASSWORD, API_KEY,
	// Authorization): every value but a path, a variable or a yes/no is
	// a secret.
	strong
)

// strongWords end the names of credentials (GITHUB_PERSONAL_ACCESS_TOKEN,
// DB_PASSWORD, MYSQL_PWD, --pw, --client-secret, Cookie, X-Figma-Token…).
var strongWords = map[string]bool{
	"token": true, "secret": true, "password": true, "passwd": true, "passphrase": true,
	"pwd": true, "pw": true, "pass": true, "apikey": true, "credential": true,
	"credentials": true, "creds": true, "cookie": true, "cookies": true,
	"authorization": true, "sig": true, "signature": true, "bearer": true,
}

// weakWords end names that hold a credential as often as not.
var weakWords = map[string]bool{"key": true, "auth": true, "pat": true, "dsn": true}

// strongKeys are the words before "key" that make it a credential's name
// (BRAVE_API_KEY, AWS_SECRET_ACCESS_KEY, --private-key, exaApiKey).
var strongKeys = map[string]bool{
	"api": true, "access": true, "secret": true, "private": true, "encryption": true,
	"signing": true, "master": true, "license": true, "account": true, "service": true,
	"subscription": true, "client": true, "app": true, "auth": true, "session": true,
}

// plainKeys are the words before "key" that make it anything but a
// credential: a public key, a sort or cache key.
var plainKeys = map[string]bool{
	"public": true, "publishable": true, "sort": true, "partition": true, "primary": true,
	"foreign": true, "cache": true, "hot": true, "idempotency": true, "routing": true,
	"group": true, "map": true, "lookup": true, "shard": true, "order": true, "object": true,
	"row": true, "hash": true, "kv": true, "unique": true, "index": true, "short": true,
}

// strongSuffixes end a name written as one word (PGPASSWORD, GHTOKEN,
// OPENAIAPIKEY, clientsecret).
var strongSuffixes = []string{"password", "passwd", "passphrase", "apikey", "accesskey",
	"secretkey", "privatekey", "token", "secret"}

// modifiers may follow a credential's word without changing what the name
// holds (AUTH_HEADER, API_KEY_VALUE, TOKEN_B64).
var modifiers = map[string]bool{"header": true, "value": true, "string": true, "str": true,
	"b64": true, "base64": true, "raw": true, "literal": true}

// nameStrength says whether the value of a flag, variable, header or query
// parameter called name is a credential. It looks at the name's last word
// (leading dashes ignored, camelCase split): TOKEN but not MAX_TOKENS or
// TOKEN_LIMIT, API_KEY but not SORT_KEY or KEY_FILE.
func nameStrength(name string) strength {
	w := words(name)
	if len(w) == 0 {
		return notSecret
	}
	if len(w) == 1 && w[0] == "pwd" && strings.ToUpper(strings.TrimLeft(name, "-")) == "PWD" {
		return notSecret // the shell's working folder
	}
	last := len(w) - 1
	if modifiers[w[last]] && last > 0 {
		last--
	}
	word, prev := w[last], ""
	if last > 0 {
		prev = w[last-1]
	}
	switch {
	case strongWords[word]:
		return strong
	case word == "key":
		switch {
		case plainKeys[prev]:
			return notSecret
		case strongKeys[prev]:
			return strong
		}
		return weak
	case weakWords[word]:
		return weak
	}
	for _, s := range strongSuffixes {
		if strings.HasSuffix(word, s) && len(word) > len(s) {
			return strong
		}
	}
	return notSecret
}

// colonNames are the names whose value may be "user:secret" (--auth
// user:pass, BASIC_AUTH, JIRA_CREDENTIALS=me@x.com:token): only what follows
// the colon is the secret.
func colonName(name string) bool {
	w := words(name)
	if len(w) == 0 {
		return false
	}
	switch w[len(w)-1] {
	case "auth", "credential", "credentials", "creds", "userpass", "basic":
		return true
	}
	return false
}

// words splits name into its lower-case words: at any character that is not
// a letter or a digit, and where camelCase changes case ("apiClientSecret",
// "X-API-Key", "tavilyApiKey", "APIKey").
func words(name string) []string {
	name = strings.TrimLeft(name, "-")
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return wordsRunes(name)
		}
	}
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	upper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	lower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !alnum(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		switch prev := name[i-1]; {
		case upper(c) && lower(prev):
			flush(i)
			start = i
		case lower(c) && upper(prev) && i-1 > start:
			flush(i - 1)
			start = i - 1
		}
	}
	flush(len(name))
	return out
}

// wordsRunes is words for names that are not ASCII.
func wordsRunes(name string) []string {
	var out []string
	rs := []rune(name)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
			start = i
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-1 > start:
			flush(i - 1)
			start = i - 1
		}
	}
	flush(len(rs))
	return out
}
