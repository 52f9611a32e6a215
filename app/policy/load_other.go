//go:build !unix && !windows

package policy

import "os"

var systemLocation = ""

func fromSystemStore() ([]byte, string, bool) { return nil, "", false }

func adminOnly(*os.File, string, bool) string { return "" }
