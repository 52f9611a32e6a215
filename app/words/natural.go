package words

import "strings"

// CompareNatural orders strings the way a person reads them: runs of
// digits compare by their value, so project-2 comes before project-10, and
// everything else compares byte by byte. Equal values written differently
// (007 and 7) fall back to the plain order, so that the order is total and
// stable. It is the one order every list of folders and servers is shown
// in.
func CompareNatural(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			if c := compareDigits(a[si:i], b[sj:j]); c != 0 {
				return c
			}
			continue
		}
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	switch {
	case len(a)-i < len(b)-j:
		return -1
	case len(a)-i > len(b)-j:
		return 1
	}
	return strings.Compare(a, b)
}

// compareDigits compares two runs of digits by value without parsing them
// (a run may be longer than any integer type).
func compareDigits(x, y string) int {
	x, y = trimZeros(x), trimZeros(y)
	if len(x) != len(y) {
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	return strings.Compare(x, y)
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
