package bridge

// The ids of requests and responses that pass the bridge untouched, read
// without decoding them: the bridge remembers a restartable server's
// unanswered requests (to answer them if it restarts), and this is on
// every call's path. A scan of the top-level members finds them with no
// allocation and no pass over what it skips but a search for its quotes; a
// message it cannot read for sure (a key with an escape, a shape it does
// not expect) goes to encoding/json as before.

import (
	"bytes"
	"encoding/json"
)

// requestID returns the id of a request (a message with a method and an
// id), reading no more of it than it must. The id may share msg's memory.
func requestID(msg []byte) (json.RawMessage, bool) {
	var id []byte
	method := false
	s := objectScan{msg: msg}
	for id == nil || !method {
		key, ok := s.next()
		if !ok {
			break
		}
		switch string(key) {
		case "id":
			if v := s.value(); id == nil {
				id = v
			}
		case "method":
			method = true
		}
	}
	if s.unsure {
		return requestIDDecoded(msg)
	}
	if !method || id == nil || string(id) == "null" {
		return nil, false
	}
	return id, true
}

// responseID returns the id of a response (a message with an id, a result
// or an error, and no method) without decoding the whole of it: it stops
// once it knows, and a megabyte result it must pass is skipped with a
// search for its quotes. The id may share msg's memory.
func responseID(msg []byte) (json.RawMessage, bool) {
	var id []byte
	payload := false
	s := objectScan{msg: msg}
	for id == nil || !payload {
		key, ok := s.next()
		if !ok {
			break
		}
		switch string(key) {
		case "id":
			if v := s.value(); id == nil {
				id = v
			}
		case "result", "error":
			payload = true
		case "method":
			return nil, false // a request or a notification
		}
	}
	if s.unsure {
		return responseIDDecoded(msg)
	}
	if id == nil || !payload {
		return nil, false
	}
	return id, true
}

// objectScan walks the top-level members of the JSON object msg: next
// gives each key as written (between its quotes), value the member's value
// as written. It sets unsure, and stops, where it cannot be sure of what
// it read: msg is not an object it can walk, or a key has an escape (which
// encoding/json would read as another name).
type objectScan struct {
	msg     []byte
	i       int
	started bool
	pending bool // the current member's value is not read yet
	unsure  bool
}

// next returns the next member's key; false at the end of the object or
// where the scan is unsure.
func (s *objectScan) next() ([]byte, bool) {
	msg := s.msg
	if !s.started {
		s.started = true
		s.i = skipSpace(msg, 0)
		if s.i >= len(msg) || msg[s.i] != '{' {
			s.unsure = true
			return nil, false
		}
		s.i = skipSpace(msg, s.i+1)
		if s.i < len(msg) && msg[s.i] == '}' {
			return nil, false
		}
	} else {
		if s.pending {
			s.value()
		}
		if s.unsure || s.i >= len(msg) {
			s.unsure = true
			return nil, false
		}
		switch msg[s.i] {
		case '}':
			return nil, false
		case ',':
			s.i = skipSpace(msg, s.i+1)
		default:
			s.unsure = true
			return nil, false
		}
	}
	if s.i >= len(msg) || msg[s.i] != '"' {
		s.unsure = true
		return nil, false
	}
	end := stringEnd(msg, s.i)
	if end < 0 {
		s.unsure = true
		return nil, false
	}
	key := msg[s.i+1 : end-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		s.unsure = true
		return nil, false
	}
	s.i = skipSpace(msg, end)
	if s.i >= len(msg) || msg[s.i] != ':' {
		s.unsure = true
		return nil, false
	}
	s.i = skipSpace(msg, s.i+1)
	s.pending = true
	return key, true
}

// value returns the value of the member next returned.
func (s *objectScan) value() []byte {
	s.pending = false
	end := valueEnd(s.msg, s.i)
	if end < 0 {
		s.unsure = true
		return nil
	}
	v := s.msg[s.i:end]
	s.i = skipSpace(s.msg, end)
	return v
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] (a
// quote), or -1: its closing quote is the first one after an even run of
// backslashes.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		k += j
		escapes := 0
		for p := k - 1; p > i && b[p] == '\\'; p-- {
			escapes++
		}
		if escapes%2 == 0 {
			return k + 1
		}
		j = k + 1
	}
}

// valueEnd returns the index just past the JSON value starting at b[i], or
// -1. Objects and arrays are matched bracket for bracket, strings skipped
// whole; numbers and literals end at a delimiter.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// requestIDDecoded is requestID by encoding/json, for what the scan is not
// sure of.
func requestIDDecoded(msg []byte) (json.RawMessage, bool) {
	var id json.RawMessage
	method := false
	ok := eachMember(msg, func(key string, v json.RawMessage) bool {
		switch key {
		case "id":
			id = v
		case "method":
			method = true
		}
		return id == nil || !method
	})
	if !ok || !method || id == nil || string(id) == "null" {
		return nil, false
	}
	return id, true
}

// responseIDDecoded is responseID by encoding/json, for what the scan is
// not sure of.
func responseIDDecoded(msg []byte) (json.RawMessage, bool) {
	var id json.RawMessage
	payload, request := false, false
	ok := eachMember(msg, func(key string, v json.RawMessage) bool {
		switch key {
		case "method":
			request = true // a request or a notification
			return false
		case "result", "error":
			payload = true
		case "id":
			if id == nil {
				id = v
			}
		}
		return id == nil || !payload
	})
	if !ok || request || id == nil || !payload {
		return nil, false
	}
	return id, true
}

// eachMember hands visit the members of the JSON object msg, in order,
// until visit returns false or the object ends; it reports false when msg
// is not an object or a member cannot be read.
func eachMember(msg []byte, visit func(key string, value json.RawMessage) bool) bool {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return false
		}
		if !visit(key, v) {
			return true
		}
	}
	return true
}
