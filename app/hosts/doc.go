// Package hosts finds the MCP hosts on this machine (Claude Code, Claude
// Desktop, Cursor, VS Code and its forks, Windsurf, Gemini CLI, Qwen Code,
// Zed, Codex, Goose, Cline, Roo Code, Kilo Code, Continue, opencode, Crush,
// GitHub Copilot CLI, Amp, Auggie, Factory Droid, Kiro, Junie, Amazon Q,
// LM Studio, Trae: the table is Hosts), reads the servers in their config
// files, user and project ones, puts each behind Rootkeeper's bridge
// (protect) and gives the files back (restore).
//
// Hosts write servers in a few shapes: an object of named entries
// (mcpServers, servers, mcp, context_servers, extensions, mcp_servers),
// or a YAML list of entries that name themselves (Continue). Each entry is
// read by serverentry.Read, the reader `import` and the window's Paste use
// too, in its host's dialect (which key holds the command, args, env, URL,
// transport); its environment stays in the host's file (HostEnv).
//
//	host config file ──parse──> doc (JSONC, TOML, YAML) ──serverentry.Read──> []Entry
//	                                 │ set/del one field at a time, in place
//	Protect: backup ─> add servers to state ─> rewrite entries ─> check the
//	         file is unchanged since read ─> atomic replace ─> record
//	Restore: file unchanged since protect? backup bytes : put back the
//	         fields Rootkeeper changed, entry by entry
//
// Edits touch only the fields they change: everything else in the file
// (comments, other keys, order, formatting) keeps its bytes. A file that
// does not parse is never written.
package hosts

import (
	"bytes"
	"fmt"
	"path/filepath"
)

// doc is a parsed config file that can be edited one field at a time. Every
// edit keeps the bytes of everything it does not change. Keys are paths of
// keys from the document's top.
type doc interface {
	path() string
	isProject() bool
	// projectDir is the project folder of a project's file ("" for a
	// user file).
	projectDir() string
	// value is the meaning of the field at key (the whole document for
	// none), as maps, slices and scalars, and whether it is there.
	value(key []string) (any, bool)
	// keys lists the member names of the object at key, in file order.
	keys(key []string) []string
	// get returns the field at key in the format's own text (what put
	// takes back), and whether it is there.
	get(key []string) ([]byte, bool)
	// render turns a value into the format's text for the field at key.
	render(key []string, v any) ([]byte, error)
	// put sets the field at key to raw (from get or render), in its place
	// when it exists, else right after its sibling after (or last).
	put(key []string, after string, raw []byte) error
	// del removes the field at key; a missing field is no error.
	del(key []string) error
	bytes() []byte
}

// atStart, as put's after, puts a field first among its siblings.
const atStart = "\x00start"

// parseDoc parses a config file in format f. A UTF-8 byte order mark, which
// Windows editors put first, is not part of the document: it is put back
// first when the file is written.
func parseDoc(f Format, path string, project string, data []byte) (doc, error) {
	if rest, ok := bytes.CutPrefix(data, []byte(byteOrderMark)); ok {
		d, err := parseDoc(f, path, project, rest)
		if err != nil {
			return nil, err
		}
		return markedDoc{d}, nil
	}
	var (
		d   doc
		err error
	)
	switch f {
	case JSON:
		d, err = parseJSON(path, project, data)
	case TOML:
		d, err = parseTOML(path, project, data)
	case YAML:
		d, err = parseYAML(path, project, data)
	default:
		return nil, fmt.Errorf("unknown format %q", f)
	}
	if err != nil {
		return nil, &ParseError{Path: path, Err: err}
	}
	return d, nil
}

// byteOrderMark is UTF-8's byte order mark.
const byteOrderMark = "\ufeff"

// markedDoc is a document that came after a byte order mark.
type markedDoc struct{ doc }

func (d markedDoc) bytes() []byte { return append([]byte(byteOrderMark), d.doc.bytes()...) }

// ParseError says a host's config file does not parse. Rootkeeper leaves
// such a file alone.
type ParseError struct {
	Path string
	Err  error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s does not parse (left untouched): %v", e.Path, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// ExitCode is 2: the input is bad.
func (e *ParseError) ExitCode() int { return 2 }

// docBase is what every doc knows besides its text: its file and, for a
// project's file, the project's folder.
type docBase struct {
	file    string
	project string
}

func (b docBase) path() string       { return filepath.Clean(b.file) }
func (b docBase) isProject() bool    { return b.project != "" }
func (b docBase) projectDir() string { return b.project }
