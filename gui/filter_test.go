package gui

import "testing"

// A filter matches any one field, whatever its case (in ASCII and not),
// never across two fields.
func TestFilterMatches(t *testing.T) {
	cases := []struct {
		text   string
		fields []string
		want   bool
	}{
		{"", nil, true},
		{"  ", []string{"a"}, true},
		{"secret", []string{"nosy", "/home/ada/SECRET/a.txt"}, true},
		{"Secret", []string{"nosy", "/home/ada/secret/a.txt"}, true},
		{"ÉTÉ", []string{"/home/ada/été/photos"}, true},
		{"été", []string{"/home/ada/ÉTÉ"}, true},
		{"nosy /home", []string{"nosy", "/home/ada"}, false},
		{"missing", []string{"nosy", "/home/ada/secret"}, false},
		{"a.txt", []string{"a.tx"}, false},
	}
	for _, c := range cases {
		if got := matches(filterQuery(c.text), c.fields...); got != c.want {
			t.Errorf("%q in %q: %v, want %v", c.text, c.fields, got, c.want)
		}
	}
}
