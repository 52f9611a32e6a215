package cli

import (
	"fmt"

	"github.com/BurntSushi/toml"
)

// VersionFromFyneApp reads the version out of FyneApp.toml (the metadata
// `fyne package` builds the bundle from), so that `--version` and the
// installed bundle can never disagree: main embeds the file and hands it
// here, and there is no second copy of the number to keep in step.
func VersionFromFyneApp(data []byte) (string, error) {
	var meta struct {
		Details struct {
			Version string
			Build   int
		}
	}
	if err := toml.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("FyneApp.toml: %w", err)
	}
	if meta.Details.Version == "" {
		return "", fmt.Errorf("FyneApp.toml has no [Details] Version")
	}
	return meta.Details.Version, nil
}
