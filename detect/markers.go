package detect

import (
	"bytes"
	"encoding/json"
	"net/url"
	"path/filepath"
)

// markerNames are file names that make the folder holding them a project.
// The values are the same strings, so that recording a marker allocates
// nothing.
var markerNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{
		"go.mod", "go.work", // Go
		"package.json", "deno.json", "deno.jsonc", // JavaScript, TypeScript
		"Cargo.toml",                                         // Rust
		"pyproject.toml", "setup.py", "setup.cfg", "Pipfile", // Python
		"pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "build.sbt", // JVM
		"CMakeLists.txt", "meson.build", "configure.ac", // C, C++
		"Gemfile",                 // Ruby
		"composer.json",           // PHP
		"mix.exs", "rebar.config", // Elixir, Erlang
		"pubspec.yaml",                // Dart, Flutter
		"Package.swift",               // Swift
		"stack.yaml", "cabal.project", // Haskell
		"dune-project",            // OCaml
		"project.clj", "deps.edn", // Clojure
		"Project.toml",                                 // Julia
		"build.zig",                                    // Zig
		"gleam.toml",                                   // Gleam
		"WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel", // Bazel
		"flake.nix", // Nix
	} {
		m[n] = n
	}
	return m
}()

// markerSuffixes are endings of file names that make a project.
var markerSuffixes = [][]byte{
	[]byte(".sln"), []byte(".csproj"), []byte(".fsproj"), []byte(".vbproj"), // .NET
	[]byte(".cabal"),        // Haskell
	[]byte(".nimble"),       // Nim
	[]byte(workspaceSuffix), // VS Code multi-root workspace
}

// markerDirSuffixes are endings of folder names that are project markers
// themselves (bundles the walk does not enter).
var markerDirSuffixes = [][]byte{[]byte(".xcodeproj"), []byte(".xcworkspace")}

const workspaceSuffix = ".code-workspace"

// fileMarker returns the marker a file name stands for, or "".
func fileMarker(name []byte) string {
	if m, ok := markerNames[string(name)]; ok {
		return m
	}
	return suffixMarker(name, markerSuffixes)
}

// dirMarker returns the marker a folder name stands for, or "".
func dirMarker(name []byte) string {
	return suffixMarker(name, markerDirSuffixes)
}

func suffixMarker(name []byte, suffixes [][]byte) string {
	for _, s := range suffixes {
		if len(name) > len(s) && bytes.HasSuffix(name, s) {
			return string(name)
		}
	}
	return ""
}

// workspaceFolders returns the local folders a VS Code .code-workspace file
// lists, made absolute against the file's folder. The file is JSON with
// comments and trailing commas, read as plain JSON by jsonc (nil: as it
// is); an unreadable or malformed file lists nothing.
func workspaceFolders(file string, jsonc func([]byte) ([]byte, error)) []string {
	data, err := readFile(file)
	if err != nil {
		return nil
	}
	if jsonc != nil {
		if data, err = jsonc(data); err != nil {
			return nil
		}
	}
	var ws struct {
		Folders []struct {
			Path string `json:"path"`
			URI  string `json:"uri"`
		} `json:"folders"`
	}
	if json.Unmarshal(data, &ws) != nil {
		return nil
	}
	base := filepath.Dir(file)
	var out []string
	for _, f := range ws.Folders {
		p := f.Path
		if p == "" && f.URI != "" {
			u, err := url.Parse(f.URI)
			if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") {
				continue // a remote folder
			}
			p = filepath.FromSlash(u.Path)
		}
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}
