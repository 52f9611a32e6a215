// Command bigclaude writes a ~/.claude.json as Claude Code leaves it after
// long use, for measuring how Rootkeeper reads host config files: the
// settings and servers are small, the per-project state is not. Each
// project keeps its prompt history (what was typed, and what was pasted:
// logs, diffs, files, often tens of kilobytes), its allowed tools, its
// own servers and its last session's numbers; the file grows with every
// project and prompt. Reported sizes of real files reach 238 MB
// (anthropics/claude-code#5653), 65 MB and 15 MB (#6394, #10192).
//
//	go run ./bench/bigclaude -mb 256 -o /tmp/home/.claude.json
//
// The output is deterministic for its flags.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

var (
	mb       = flag.Int("mb", 256, "approximate size of the file, MiB")
	out      = flag.String("o", ".claude.json", "where to write it")
	servers  = flag.Int("servers", 10, "servers in the user's mcpServers")
	projects = flag.Int("projects", 0, "projects (default: one per MiB, at least 20)")
)

var words = strings.Fields(`the a fix add test build run why does this fail when we call it with an empty
list refactor handler into its own package make sure errors are wrapped and logged please review the
diff below and explain what changed in parse config load state write file server client request
response timeout retry backoff cache index query migration schema user session token auth route`)

func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// pasted is what people paste into a prompt: a log, a stack trace, a diff.
func pasted(r *rand.Rand, size int) string {
	var b strings.Builder
	for b.Len() < size {
		switch r.IntN(3) {
		case 0:
			fmt.Fprintf(&b, "2025-09-%02dT%02d:%02d:%02dZ ERROR %s\n", 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), sentence(r, 8))
		case 1:
			fmt.Fprintf(&b, "    at %s (/home/ada/src/app/src/%s.ts:%d:%d)\n", words[r.IntN(len(words))], words[r.IntN(len(words))], r.IntN(900), r.IntN(80))
		default:
			fmt.Fprintf(&b, "+\tif err := %s(%q); err != nil {\n-\treturn nil\n", words[r.IntN(len(words))], sentence(r, 3))
		}
	}
	return b.String()
}

func main() {
	flag.Parse()
	r := rand.New(rand.NewPCG(1, uint64(*mb)))
	target := *mb << 20
	n := *projects
	if n == 0 {
		n = max(20, *mb)
	}
	perProject := target / n
	userServers := map[string]any{}
	for i := range *servers {
		userServers[fmt.Sprintf("server-%d", i)] = map[string]any{
			"type": "stdio", "command": "npx", "args": []string{"-y", fmt.Sprintf("@example/mcp-server-%d", i)},
			"env": map[string]string{},
		}
	}
	projs := map[string]any{}
	for p := range n {
		var history []any
		size := 0
		for size < perProject {
			entry := map[string]any{"display": sentence(r, 5+r.IntN(60)), "pastedContents": map[string]any{}}
			if r.IntN(4) == 0 {
				text := pasted(r, 1024+r.IntN(64<<10))
				entry["display"] = entry["display"].(string) + " [Pasted text #1 +" + fmt.Sprint(strings.Count(text, "\n")) + " lines]"
				entry["pastedContents"] = map[string]any{"1": map[string]any{"id": 1, "type": "text", "content": text}}
				size += len(text)
			}
			size += len(entry["display"].(string)) + 40
			history = append(history, entry)
		}
		projs[fmt.Sprintf("/home/ada/src/%s-%03d", words[p%len(words)], p)] = map[string]any{
			"allowedTools":                            []string{"Bash(go test:*)", "Edit", "Read"},
			"history":                                 history,
			"mcpContextUris":                          []string{},
			"mcpServers":                              map[string]any{},
			"enabledMcpjsonServers":                   []string{},
			"disabledMcpjsonServers":                  []string{},
			"hasTrustDialogAccepted":                  true,
			"projectOnboardingSeenCount":              2,
			"hasClaudeMdExternalIncludesApproved":     false,
			"hasClaudeMdExternalIncludesWarningShown": false,
			"lastCost":                                r.Float64() * 3,
			"lastAPIDuration":                         r.IntN(900000),
			"lastDuration":                            r.IntN(9000000),
			"lastLinesAdded":                          r.IntN(900),
			"lastLinesRemoved":                        r.IntN(300),
			"lastTotalInputTokens":                    r.IntN(900000),
			"lastTotalOutputTokens":                   r.IntN(90000),
			"lastSessionId":                           fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), r.IntN(1<<12), r.Uint64()>>16),
			"exampleFiles":                            []string{"main.go", "server.go", "config.go"},
		}
	}
	doc := map[string]any{
		"numStartups":                       1200 + r.IntN(4000),
		"installMethod":                     "global",
		"autoUpdates":                       true,
		"tipsHistory":                       map[string]int{"new-user-warmup": 1, "shift-enter": 40, "memory-command": 120},
		"userID":                            fmt.Sprintf("%064x", r.Uint64()),
		"firstStartTime":                    "2025-03-02T09:12:44.120Z",
		"projects":                          projs,
		"mcpServers":                        userServers,
		"hasCompletedOnboarding":            true,
		"lastOnboardingVersion":             "1.0.100",
		"subscriptionNoticeCount":           0,
		"hasAvailableSubscription":          false,
		"cachedChangelog":                   sentence(r, 3000),
		"changelogLastFetched":              1757000000000,
		"fallbackAvailableWarningThreshold": 0.5,
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, data, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s: %.1f MiB, %d projects\n", *out, float64(len(data))/(1<<20), n)
}
