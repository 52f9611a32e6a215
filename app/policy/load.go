package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// location is where this system keeps the policy file (load_*.go); on
// Windows the registry is read first. Only a test binary built with the
// tag rootkeeper_policytest can change it (seam_test_policy.go).
var location = systemLocation

// parentsChecked: the folders above the file must be an administrator's
// too (a test binary's seam turns this off for its temporary folder).
var parentsChecked = true

// Location is where this system keeps the policy file.
func Location() string { return location }

// Load reads this machine's policy: no policy when there is none, a
// broken one (Broken says why) when it cannot be read or a person other
// than an administrator could have written it.
func Load() Policy {
	if data, source, ok := fromSystemStore(); ok {
		return parsed(data, source)
	}
	f, err := os.Open(location)
	if errors.Is(err, fs.ErrNotExist) {
		return Policy{}
	}
	if err != nil {
		return Policy{Source: location, Broken: "cannot read it: " + err.Error()}
	}
	defer f.Close()
	if why := adminOnly(f, location, parentsChecked); why != "" {
		return Policy{Source: location, Broken: why}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return Policy{Source: location, Broken: "cannot read it: " + err.Error()}
	}
	return parsed(data, location)
}

func parsed(data []byte, source string) Policy {
	p, err := Parse(data)
	if err != nil {
		return Policy{Source: source, Broken: err.Error()}
	}
	p.Source = source
	return p
}

// brokenText says what a broken policy means for the person.
func (p Policy) brokenText() string {
	return fmt.Sprintf("the organisation's policy %s cannot be used (%s): nothing can be granted until an administrator fixes it", p.Source, p.Broken)
}

// Refusal is the one line a grant refused by a broken policy says, ""
// when the policy is not broken.
func (p Policy) Refusal() string {
	if p.Broken == "" {
		return ""
	}
	return p.brokenText()
}
