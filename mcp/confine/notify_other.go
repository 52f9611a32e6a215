//go:build linux && !amd64 && !arm64

package confine

// pathCalls: none known here; a server is not confined on this
// architecture anyway (see nativeArch).
var pathCalls = map[uint32]callShape{}

// metaCalls: none known here either.
var metaCalls = map[uint32]metaShape{}
