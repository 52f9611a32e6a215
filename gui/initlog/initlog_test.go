package initlog

import "testing"

func TestWithoutLocaleNoise(t *testing.T) {
	in := "2026/11/21 18:11:28 Fyne error:  Error parsing user locale C\n" +
		"2026/11/21 18:11:28   Cause: language: tag is not well-formed\n" +
		"2026/11/21 18:11:28   At: /go/pkg/mod/fyne.io/fyne/v2@v2.7.1/lang/locale.go:35\n" +
		"2026/11/21 18:11:28 something else worth seeing\n" +
		"2026/11/21 18:11:28 Fyne error:  Failed to load something\n" +
		"2026/11/21 18:11:28   Cause: boom\n"
	want := "2026/11/21 18:11:28 something else worth seeing\n" +
		"2026/11/21 18:11:28 Fyne error:  Failed to load something\n" +
		"2026/11/21 18:11:28   Cause: boom\n"
	if got := withoutLocaleNoise(in); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
