// Package house holds no code: its tests read the source tree itself and
// keep it one a newcomer can live in — no function longer than a screen
// without the reason given, every file at app/'s root on app/doc.go's map,
// no consent built by the window itself (gui asks app to decide).
package house
