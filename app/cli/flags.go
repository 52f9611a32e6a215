package cli

import (
	"fmt"
	"strconv"
	"strings"

	"rootkeeper/app/secrets/spot"
)

// UsageError is a mistake in how a command was typed. It exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ExitCode is 2: bad usage.
func (e *UsageError) ExitCode() int { return 2 }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// flags describes the options one verb takes. Unlike the standard flag
// package it accepts options after positional arguments ("roots add PATH
// --enable"), and stops at "--".
type flags struct {
	verb  string
	bools map[string]*bool
	strs  map[string]*string
	lists map[string]*[]string
	ints  map[string]*int
	seen  map[string]bool // the options typed
}

func newFlags(verb string) *flags {
	return &flags{verb: verb, bools: map[string]*bool{}, strs: map[string]*string{}, lists: map[string]*[]string{}, ints: map[string]*int{}, seen: map[string]bool{}}
}

// Given reports whether option name was typed.
func (f *flags) Given(name string) bool { return f.seen[name] }

func (f *flags) Bool(name string) *bool        { v := new(bool); f.bools[name] = v; return v }
func (f *flags) String(name string) *string    { v := new(string); f.strs[name] = v; return v }
func (f *flags) List(name string) *[]string    { v := new([]string); f.lists[name] = v; return v }
func (f *flags) Int(name string, def int) *int { v := &def; f.ints[name] = v; return v }

// parse returns the positional arguments and, separately, everything after
// a "--".
func (f *flags) parse(args []string) (pos, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return pos, args[i+1:], nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f.seen[name] = true
		if b, ok := f.bools[name]; ok {
			if hasValue {
				v, err := strconv.ParseBool(value)
				if err != nil {
					return nil, nil, usagef("invalid value %q for --%s of %q", value, name, f.verb)
				}
				*b = v
			} else {
				*b = true
			}
			continue
		}
		_, isStr := f.strs[name]
		_, isList := f.lists[name]
		_, isInt := f.ints[name]
		if !isStr && !isList && !isInt {
			return nil, nil, usagef("unknown option %q for %q", a, f.verb)
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, nil, usagef("option --%s of %q needs a value", name, f.verb)
			}
			i++
			value = args[i]
		}
		switch {
		case isStr:
			*f.strs[name] = value
		case isList:
			*f.lists[name] = append(*f.lists[name], value)
		case isInt:
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return nil, nil, usagef("invalid number %q for --%s of %q", value, name, f.verb)
			}
			*f.ints[name] = n
		}
	}
	return pos, nil, nil
}

// exactly checks the count of positional arguments.
func exactly(verb string, pos []string, names ...string) error {
	if len(pos) < len(names) {
		return usagef("%q needs %s", verb, strings.Join(names[len(pos):], " and "))
	}
	if len(pos) > len(names) {
		return usagef("unexpected argument %q for %q", pos[len(names)], verb)
	}
	return nil
}

// keyValues turns K=V options into a map, naming the first malformed one.
func keyValues(option string, list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if option == "header" {
			// curl's "Name: value" too; a value may hold '=' (base64).
			if hk, hv, hok := strings.Cut(kv, ":"); hok && (!ok || len(hk) < len(k)) {
				k, v, ok = hk, strings.TrimSpace(hv), true
			}
		}
		if !ok || k == "" {
			// It may be a secret given without its name.
			return nil, usagef("invalid --%s %q (want KEY=VALUE)", option, spot.ShowArgs("", []string{kv})[0])
		}
		m[k] = v
	}
	return m, nil
}
