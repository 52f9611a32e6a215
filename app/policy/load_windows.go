//go:build windows

package policy

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// registryKey and registryValue hold the policy where Group Policy puts
// machine policies: only administrators may write there.
const (
	registryKey   = `SOFTWARE\Policies\Rootkeeper`
	registryValue = "Policy"
)

// systemLocation is %ProgramData%\Rootkeeper\policy.json, found through
// the known folder (not the environment variable, which a person sets).
var systemLocation = func() string {
	dir, err := windows.KnownFolderPath(windows.FOLDERID_ProgramData, 0)
	if err != nil {
		dir = `C:\ProgramData`
	}
	return filepath.Join(dir, "Rootkeeper", "policy.json")
}()

// fromSystemStore reads the registry value, when it is there.
func fromSystemStore() ([]byte, string, bool) {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, registryKey, registry.QUERY_VALUE)
	if err != nil {
		return nil, "", false
	}
	defer k.Close()
	source := `HKLM\` + registryKey + `\` + registryValue
	if s, _, err := k.GetStringValue(registryValue); err == nil {
		return []byte(s), source, true
	}
	if ss, _, err := k.GetStringsValue(registryValue); err == nil {
		return []byte(strings.Join(ss, "\n")), source, true
	}
	return nil, "", false
}

// adminOnly: %ProgramData%\Rootkeeper is made by an installer, with the
// folder's default rights; the registry value is the place that only
// administrators can write, and the one a fleet should use.
func adminOnly(*os.File, string, bool) string { return "" }
