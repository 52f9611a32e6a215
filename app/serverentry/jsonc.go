package serverentry

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"

	"rootkeeper/app/words"
)

// MaxDepth is how deeply JSONC may nest, as deep as encoding/json, YAML
// and TOML readers allow: a server entry nests four levels, a host's whole
// settings file a few more.
const MaxDepth = 10000

// ParseJSONC parses JSON with comments and trailing commas into hujson's
// exact syntax tree (which keeps every byte, for editing in place). Input
// nested deeper than MaxDepth is refused before hujson sees it: hujson
// parses by recursion, and a hostile file of a few megabytes of "[" would
// overflow the stack, which no recover catches.
func ParseJSONC(data []byte) (hujson.Value, error) {
	if err := checkDepth(data); err != nil {
		return hujson.Value{}, err
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return v, errors.New(oneLine(strings.TrimPrefix(err.Error(), "hujson: ")))
	}
	return v, nil
}

// Standardize is JSON with comments and trailing commas made plain JSON,
// by ParseJSONC's rules (nesting bounded): what detect reads a VS Code
// workspace file with.
func Standardize(data []byte) ([]byte, error) {
	v, err := ParseJSONC(data)
	if err != nil {
		return nil, err
	}
	v.Standardize()
	return v.Pack(), nil
}

// oneLine makes a parser's message, which may quote the input, fit for one
// line of a terminal: its control and invisible characters escaped, and
// cut to its first 200 characters.
func oneLine(msg string) string {
	msg = words.SafeText(msg)
	n := 0
	for i := range msg {
		if n == 200 {
			return msg[:i] + "…"
		}
		n++
	}
	return msg
}

// checkDepth counts the brackets of data outside strings and comments, by
// the lexical rules hujson parses with, and refuses nesting deeper than
// MaxDepth. Malformed input is left to hujson to report.
func checkDepth(data []byte) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case bytes.HasPrefix(data[i:], []byte("//")):
				if end := bytes.IndexByte(data[i:], '\n'); end >= 0 {
					i += end
				} else {
					i = len(data)
				}
			case bytes.HasPrefix(data[i:], []byte("/*")):
				if end := bytes.Index(data[i+2:], []byte("*/")); end >= 0 {
					i += 2 + end + 1
				} else {
					i = len(data)
				}
			}
		case '{', '[':
			if depth++; depth > MaxDepth {
				line := 1 + bytes.Count(data[:i], []byte("\n"))
				return fmt.Errorf("line %d: nested more than %d levels deep", line, MaxDepth)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}
