package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// InvalidURIError says why a string is not an acceptable root URI. Its message
// is one line: `invalid root URI "<uri>": <reason>`.
type InvalidURIError struct {
	URI    string // the URI as given
	Reason string // why it was refused
}

func (e *InvalidURIError) Error() string {
	return fmt.Sprintf("invalid root URI %q: %s", e.URI, e.Reason)
}

// InvalidPathError says why a string is not an acceptable absolute path. Its
// message is one line: `invalid path "<path>": <reason>`.
type InvalidPathError struct {
	Path   string // the path as given
	Reason string // why it was refused
}

func (e *InvalidPathError) Error() string {
	return fmt.Sprintf("invalid path %q: %s", e.Path, e.Reason)
}

const upperHex = "0123456789ABCDEF"

// unreserved reports whether b may appear unescaped in a URI path segment
// (RFC 3986 "unreserved").
func unreserved(b byte) bool {
	return 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' ||
		b == '-' || b == '.' || b == '_' || b == '~'
}

// URIFromPath returns the file:// URI of an absolute, clean path,
// percent-encoding every byte except the unreserved characters A-Z a-z 0-9
// - . _ ~ and the separator "/", so that spaces, '#', '%', '?', ';', non-ASCII
// letters (UTF-8 bytes), and a leading '-' survive a round trip. Example:
// "/home/a b/#x" -> "file:///home/a%20b/%23x". Hex digits are upper case.
//
// The path is not validated (see [ValidAbsPath]); a relative path yields a
// relative "file:" URI, which [PathFromURI] refuses, rather than one whose
// first segment would be read as a host name.
func URIFromPath(p string) string {
	slashed := filepath.ToSlash(p)
	var b strings.Builder
	b.Grow(len("file://") + len(slashed) + 16)
	prefix := "file://"
	if vol := filepath.VolumeName(p); len(vol) == 2 && vol[1] == ':' {
		// Windows drive letter: C:\x -> file:///C:/x (the colon kept as is).
		b.WriteString(prefix + "/" + vol)
		slashed = slashed[2:]
	} else if !strings.HasPrefix(slashed, "/") {
		prefix = "file:"
		b.WriteString(prefix)
	} else {
		b.WriteString(prefix)
	}
	for i := 0; i < len(slashed); i++ {
		c := slashed[i]
		if c == '/' || unreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&0xF])
	}
	return b.String()
}

// PathFromURI is the inverse of [URIFromPath]: PathFromURI(URIFromPath(p)) == p
// for every absolute clean path without NUL.
//
// It accepts file:///p, file://localhost/p and file:/p (scheme and
// "localhost" in any case), a trailing slash (file:///a/b/ -> /a/b),
// percent escapes with upper- or lower-case hex, and bytes that should have
// been escaped but were not (a space, say). It refuses, with an
// [*InvalidURIError] naming the URI and the reason: another scheme, another
// host, a relative or empty path, "." and ".." segments (also when
// percent-encoded), empty segments ("//"), NUL bytes (raw or %00), encoded
// slashes (%2F), malformed escapes, and a query or fragment.
func PathFromURI(uri string) (string, error) {
	bad := func(reason string) (string, error) {
		return "", &InvalidURIError{URI: uri, Reason: reason}
	}
	rest, err := uriPath(uri)
	if err != nil {
		return bad(err.Error())
	}
	p, err := pathFromSegments(rest)
	if err != nil {
		return bad(err.Error())
	}
	if filepath.Separator != '/' && isDrive(p) {
		p += string(filepath.Separator) // "C:" -> `C:\`
	}
	if err := ValidAbsPath(p); err != nil {
		return bad(err.(*InvalidPathError).Reason)
	}
	if filepath.Clean(p) != p {
		return bad(fmt.Sprintf("path is not clean (%q)", p))
	}
	return p, nil
}

// uriPath is the path of a file URI as written, "/seg/seg/...": what
// follows the scheme and the host, which must be empty or localhost. The
// error, a reason for [InvalidURIError], refuses a NUL byte, another
// scheme, another host, a query or fragment, and an empty or relative
// path.
func uriPath(uri string) (string, error) {
	if strings.IndexByte(uri, 0) >= 0 {
		return "", errors.New("contains a NUL byte")
	}
	colon := strings.IndexByte(uri, ':')
	if colon < 0 || strings.ContainsAny(uri[:colon], "/?#") {
		return "", errors.New("missing scheme (want file://)")
	}
	if scheme := uri[:colon]; !strings.EqualFold(scheme, "file") {
		return "", fmt.Errorf("scheme must be file, not %q", scheme)
	}
	rest := uri[colon+1:]
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		if rest[i] == '?' {
			return "", fmt.Errorf("has a query (%q); encode '?' in a path as %%3F", rest[i:])
		}
		return "", fmt.Errorf("has a fragment (%q); encode '#' in a path as %%23", rest[i:])
	}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		host := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			host = rest[:i]
		}
		if host != "" && !strings.EqualFold(host, "localhost") {
			return "", fmt.Errorf("host must be empty or localhost, not %q", host)
		}
		rest = rest[len(host):]
	}
	if rest == "" {
		return "", errors.New("empty path")
	}
	if rest[0] != '/' {
		return "", errors.New("path is relative (want file:///absolute/path)")
	}
	return rest, nil
}

// pathFromSegments decodes a URI's path, "/seg/seg/..." with a single
// trailing slash allowed, into a path of this system (a Windows drive
// letter starts it without a slash before). The error, a reason for
// [InvalidURIError], refuses empty segments, malformed escapes, and
// segments that are "." or "..", or that hold a NUL byte or a separator
// once decoded.
func pathFromSegments(rest string) (string, error) {
	segs := strings.Split(rest[1:], "/")
	if len(segs) > 1 && segs[len(segs)-1] == "" {
		segs = segs[:len(segs)-1]
	}
	var out strings.Builder
	out.Grow(len(rest))
	for i, raw := range segs {
		if raw == "" {
			if len(segs) == 1 {
				break // the root, "/"
			}
			return "", errors.New("empty path segment (\"//\")")
		}
		seg, err := unescapeSegment(raw)
		if err != nil {
			return "", err
		}
		switch {
		case seg == ".":
			return "", fmt.Errorf("path has a \".\" segment (%q)", raw)
		case seg == "..":
			return "", fmt.Errorf("path has a \"..\" segment (%q)", raw)
		case strings.IndexByte(seg, 0) >= 0:
			return "", errors.New("contains a NUL byte (%00)")
		case strings.IndexByte(seg, '/') >= 0:
			return "", fmt.Errorf("has an encoded slash (%%2F) in segment %q", raw)
		case filepath.Separator != '/' && strings.IndexRune(seg, filepath.Separator) >= 0:
			return "", fmt.Errorf("has a path separator %q in segment %q", filepath.Separator, raw)
		}
		if i > 0 || !isDrive(seg) || filepath.Separator == '/' {
			out.WriteByte('/')
		}
		out.WriteString(seg)
	}
	p := out.String()
	if p == "" {
		p = "/"
	}
	return filepath.FromSlash(p), nil
}

// isDrive reports whether s is a Windows drive letter with its colon, "C:".
func isDrive(s string) bool {
	return len(s) == 2 && s[1] == ':' && ('A' <= s[0] && s[0] <= 'Z' || 'a' <= s[0] && s[0] <= 'z')
}

// unescapeSegment decodes the percent escapes of one path segment. Unlike
// url.PathUnescape it does not treat '+' specially and it reports the exact
// malformed escape.
func unescapeSegment(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		return s, nil
	}
	buf := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			buf = append(buf, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("malformed percent escape %q", s[i:])
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("malformed percent escape %q", s[i:i+3])
		}
		buf = append(buf, hi<<4|lo)
		i += 2
	}
	return string(buf), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ValidAbsPath reports, as an [*InvalidPathError] naming the path, whether p
// is empty, relative, or contains a NUL byte. It does not require p to be
// clean or to exist.
func ValidAbsPath(p string) error {
	switch {
	case p == "":
		return &InvalidPathError{Path: p, Reason: "empty path"}
	case strings.IndexByte(p, 0) >= 0:
		return &InvalidPathError{Path: p, Reason: "contains a NUL byte"}
	case !filepath.IsAbs(p):
		return &InvalidPathError{Path: p, Reason: "not an absolute path"}
	}
	return nil
}

// CanonicalPath resolves what a person typed: a relative path is taken from
// cwd (the process's working directory when cwd is empty); the result is
// absolute, cleaned and has symlinks resolved (filepath.EvalSymlinks). It
// returns the canonical path and the cleaned absolute path as given (for
// display). A path that does not exist is an error naming it that wraps
// fs.ErrNotExist.
func CanonicalPath(given, cwd string) (canonical, display string, err error) {
	if given == "" {
		return "", "", &InvalidPathError{Path: given, Reason: "empty path"}
	}
	if strings.IndexByte(given, 0) >= 0 {
		return "", "", &InvalidPathError{Path: given, Reason: "contains a NUL byte"}
	}
	p := given
	if !filepath.IsAbs(p) {
		if cwd == "" {
			if cwd, err = os.Getwd(); err != nil {
				return "", "", fmt.Errorf("resolving relative path %q: %w", given, err)
			}
		}
		if err := ValidAbsPath(cwd); err != nil {
			return "", "", fmt.Errorf("resolving relative path %q: working directory: %w", given, err)
		}
		p = filepath.Join(cwd, p)
	}
	display = filepath.Clean(p)
	if err := ValidAbsPath(display); err != nil {
		return "", "", err
	}
	canonical, err = filepath.EvalSymlinks(display)
	if err != nil {
		name := fmt.Sprintf("%q", display)
		if given != display {
			name += fmt.Sprintf(" (given as %q)", given)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("path %s does not exist: %w", name, fs.ErrNotExist)
		}
		return "", "", fmt.Errorf("cannot resolve path %s: %w", name, err)
	}
	canonical = filepath.Clean(canonical)
	if !filepath.IsAbs(canonical) { // EvalSymlinks keeps absolute input absolute; be sure
		if canonical, err = filepath.Abs(canonical); err != nil {
			return "", "", fmt.Errorf("cannot resolve path %q: %w", display, err)
		}
	}
	return canonical, display, nil
}

// Resolved is path with its symbolic links resolved, or path as it is when
// that cannot be done (it does not exist, say).
func Resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}
