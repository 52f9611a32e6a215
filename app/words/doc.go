// Package words holds how Rootkeeper writes what a person reads, for text
// of any origin: untrusted text made safe for one line of a terminal or a
// label ([SafeText], [SafeLines], [HasUnsafeText], [UnsafeRune]) and quoted
// for a shell ([ShellQuote]); paths written short ([HomeShort],
// [CutMiddle]); and the one natural order every list is shown in
// ([CompareNatural]). It depends on no type of Rootkeeper's, so that app,
// the command line and the window all share the same wording helpers.
package words
