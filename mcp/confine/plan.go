package confine

// The plan of a confined server's ruleset (plan): its roots read-write,
// carved around the protected folders (carve); its temp and data folders
// and its own files read-write; what it needs to run read-only (the system
// folders, its programs, its runtime and its launcher's folders); each
// path once with its widest access, and none beneath a protected folder
// but its temp and data folders.

import (
	"os"
	"os/exec"
	"path/filepath"
	"rootkeeper/app"
	"slices"
)

// Access classes of a rule. The child turns them into Landlock rights for
// the ABI it finds, and for a file keeps only the rights files can have.
const (
	accessList  = "l"  // list a folder's entries, nothing else
	accessRead  = "r"  // read and execute
	accessWrite = "rw" // everything Landlock handles
)

// rank orders the access classes, widest last.
var rank = map[string]int{accessList: 1, accessRead: 2, accessWrite: 3}

// rule grants access to a path and everything beneath it.
type rule struct {
	Path   string `json:"path"`
	Access string `json:"access"`
	// Entry marks an entry granted by carve: a symlink there is skipped
	// rather than followed, since a rule on its target would reach past
	// the root.
	Entry bool `json:"entry,omitempty"`
}

// procSelf is resolved by the child, whose pid the server keeps across the
// exec, so that it is the server's own /proc entry and no other's.
const procSelf = "/proc/self"

// systemRead are the folders and files any program may need to run:
// libraries, the loader, configuration, a few /proc and /sys files that
// runtimes read for the number of CPUs and the memory (node, Go, python),
// and the harmless devices. Missing ones are skipped.
var systemRead = []string{
	"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/nix/store",
	procSelf, "/proc/meminfo", "/proc/cpuinfo", "/proc/stat", "/proc/version", "/proc/loadavg",
	"/proc/uptime", "/proc/filesystems", "/proc/sys/kernel", "/proc/sys/vm/overcommit_memory",
	"/proc/sys/fs/inotify", "/proc/sys/fs/nr_open", "/proc/sys/fs/file-max",
	"/sys/devices/system/cpu", "/sys/fs/cgroup", "/sys/kernel/mm/transparent_hugepage",
	"/dev/random", "/dev/urandom",
}

// systemWrite are devices every program may write to.
var systemWrite = []string{"/dev/null", "/dev/zero", "/dev/full"}

// plan is the spec for cmd under p: the real executable, and the rules.
// home is the person's home folder, never granted as a whole.
func plan(cmd *exec.Cmd, p Policy, home string) (spec, error) {
	if cmd.Err != nil {
		return spec{}, cmd.Err
	}
	exe, err := absoluteProgram(cmd)
	if err != nil {
		return spec{}, err
	}
	s := spec{Path: exe}
	add := s.adder()
	add(accessRead, systemRead...)
	add(accessWrite, systemWrite...)
	for _, root := range p.Roots {
		s.Rules = append(s.Rules, carve(filepath.Clean(root), p.Protect)...)
	}
	add(accessWrite, p.Temp, p.Data)
	add(accessWrite, p.Own...)
	add(accessRead, p.ReadOnly...)
	interp := interpreter(exe, envPath(cmd.Env))
	programs := s.addPrograms(cmd, exe, interp, home)
	// Argument parsers and find-up walk from a program's folder to the
	// nearest manifest above it: those folders may be listed (names
	// only, nothing in them read).
	add(accessList, manifestWalk(programs, home)...)
	s.addLaunchers(cmd, []string{exe, interp}, home)
	if home != "" {
		for _, rel := range programHomes {
			add(accessRead, filepath.Join(home, rel))
		}
	}
	s.env = append(s.env, p.Env...)
	s.Rules = dedupe(s.Rules)
	s.Rules = outsideProtected(s.Rules, p)
	return s, nil
}

// absoluteProgram is the command's program as an absolute path.
func absoluteProgram(cmd *exec.Cmd) (string, error) {
	exe := cmd.Path
	if filepath.IsAbs(exe) {
		return exe, nil
	}
	base := cmd.Dir
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		base = wd
	}
	return filepath.Join(base, exe), nil
}

// adder returns a function that adds a rule of one access for each path
// given (none for "").
func (s *spec) adder() func(access string, paths ...string) {
	return func(access string, paths ...string) {
		for _, path := range paths {
			if path == "" {
				continue
			}
			s.Rules = append(s.Rules, rule{Path: filepath.Clean(path), Access: access})
		}
	}
}

// addPrograms lets the command be read and run, as named and as resolved:
// a node_modules/.bin link and the package it points into, a venv's python
// and the system one, the script a runtime is started on; a data file
// named on the command line (a config, say) is readable itself, not its
// folder. It returns the program folders.
func (s *spec) addPrograms(cmd *exec.Cmd, exe, interp, home string) []string {
	add := s.adder()
	programs := programFolders(exe, home)
	if interp != "" {
		programs = append(programs, programFolders(interp, home)...)
	}
	for _, arg := range cmd.Args[1:] {
		f := scriptArg(arg, cmd.Dir)
		switch {
		case f == "":
		case isProgram(f):
			programs = append(programs, programFolders(f, home)...)
		default:
			add(accessRead, f)
		}
	}
	add(accessRead, programs...)
	return programs
}

// addLaunchers lets a runtime manager or a package launcher (npx, uvx…)
// among progs read what it reads: its own folders in home and, run in a
// project, that project's installed packages and manifests.
func (s *spec) addLaunchers(cmd *exec.Cmd, progs []string, home string) {
	add := s.adder()
	for _, prog := range progs {
		if m := runtimeManager(prog, home); m != "" {
			add(accessRead, m)
		}
		l, ok := launchers[filepath.Base(prog)]
		if !ok {
			continue
		}
		for _, rel := range l.read {
			if home != "" {
				add(accessRead, filepath.Join(home, rel))
			}
		}
		if cmd.Dir != "" {
			// A package installed in the project it runs in (npx X
			// finds node_modules/.bin/X there, and reads the lock).
			add(accessRead, filepath.Join(cmd.Dir, "node_modules"))
			for _, m := range projectManifests {
				add(accessRead, filepath.Join(cmd.Dir, m))
			}
		}
	}
}

// outsideProtected drops every rule beneath a protected folder but the
// private temp folder and the data folder, even where a data file or a
// program was named there.
func outsideProtected(rules []rule, p Policy) []rule {
	// Each protected folder as named and resolved, once, not once a rule.
	var protected []string
	for _, pr := range p.Protect {
		if abs, err := filepath.Abs(pr); err == nil && pr != "" {
			protected = append(protected, abs, app.Resolved(abs))
		}
	}
	return slices.DeleteFunc(rules, func(r rule) bool {
		if (p.Temp != "" && r.Path == filepath.Clean(p.Temp)) || (p.Data != "" && r.Path == filepath.Clean(p.Data)) {
			return false
		}
		return slices.ContainsFunc(protected, func(pr string) bool { return app.IsWithin(r.Path, pr) })
	})
}

// dedupe drops repeated rules; for a path given twice the wider access wins.
func dedupe(rules []rule) []rule {
	seen := map[string]int{}
	var out []rule
	for _, r := range rules {
		if i, ok := seen[r.Path]; ok {
			if rank[r.Access] > rank[out[i].Access] {
				out[i].Access = r.Access
			}
			continue
		}
		seen[r.Path] = len(out)
		out = append(out, r)
	}
	return out
}

// carve grants root read-write, less the protected folders: a root inside
// a protected folder (or equal to it) is not granted at all; a root that holds one
// is granted entry by entry, every folder on the way down to the protected
// one only listed, so that the protected folder's files can be neither
// read nor written. Entries that appear in such a folder after the start
// are not reachable until the server is restarted, and files cannot be
// created right in it.
func carve(root string, protect []string) []rule {
	var inside []string
	for _, p := range protect {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = app.Resolved(abs)
		}
		if app.IsWithin(root, p) {
			return nil
		}
		if app.IsWithin(p, root) {
			inside = append(inside, p)
		}
	}
	if len(inside) == 0 {
		return []rule{{Path: root, Access: accessWrite}}
	}
	rules := []rule{{Path: root, Access: accessList}}
	entries, err := os.ReadDir(root)
	if err != nil {
		return rules
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			continue // its target is reachable only if granted on its own
		}
		sub := carve(filepath.Join(root, e.Name()), inside)
		for i := range sub {
			sub[i].Entry = true
		}
		rules = append(rules, sub...)
	}
	return rules
}
