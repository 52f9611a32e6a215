package hosts_test

import (
	"fmt"
	"os"
	"path/filepath"

	"rootkeeper/app"
	"rootkeeper/app/hosts"
)

// Protect puts a host's servers behind the bridge: only the fields that
// change are touched, comments and order stay, and restore gives the bytes
// back.
func ExampleProtect() {
	home, _ := os.MkdirTemp("", "home")
	defer os.RemoveAll(home)
	store, _ := app.OpenStore(filepath.Join(home, "state"))
	config := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(config), 0o755)
	original := `{
  // the servers Cursor starts
  "mcpServers": {
    "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}
  }
}
`
	os.WriteFile(config, []byte(original), 0o644)
	cursor, _ := hosts.Lookup("cursor")
	o := hosts.Options{World: hosts.World{GOOS: "linux", Home: home}, Store: store, Executable: "/usr/local/bin/rootkeeper"}
	if _, err := hosts.Protect(cursor, o); err != nil {
		fmt.Println(err)
	}
	data, _ := os.ReadFile(config)
	fmt.Print(string(data))
	hosts.Restore(cursor, o)
	data, _ = os.ReadFile(config)
	fmt.Println(string(data) == original)
	// Output:
	// {
	//   // the servers Cursor starts
	//   "mcpServers": {
	//     "everything": {"command": "/usr/local/bin/rootkeeper", "args": ["bridge", "cursor.everything"]}
	//   }
	// }
	// true
}
