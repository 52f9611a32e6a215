// Package detect finds a person's projects on disk: git repositories and
// folders holding a project marker such as go.mod or package.json. Everything
// it finds is a Candidate; nothing here exposes, records or decides anything.
//
//	search folders ──> walker (pool of goroutines, one shared stack of folders)
//	                      │ one directory read per folder, names only
//	                      ├─ .git dir/file ──> git.go: HEAD + config (go-git's config parser)
//	                      ├─ HEAD+objects+refs ──> bare repository
//	                      ├─ marker names ──> markers.go (and *.code-workspace folders)
//	                      └─ sub-folders, minus the skip list, mount points, /proc /sys /dev
//	           (cache.go: or no read at all, for a folder whose stat the cache knows)
//	found(Candidate)   progress(Progress) ≤ 20/s plus a final one
//
// A scan reads each folder once and stats nothing unless the file system
// does not say an entry's type. Symbolic links to folders are never
// followed, so a link loop cannot trap the walk; the walk stays on the search
// folder's file system (see Scanner.CrossFilesystems).
//
// A Scanner with a Cache re-scans cheaply: a folder whose inode number,
// modification and change times match what the cache noted when it was last
// read (and that had not changed in the 2 seconds before that scan) is taken
// from the cache, one stat instead of an open, a read and a close; its
// sub-folders are still visited, since a change deep down changes only the
// folder it happens in. The cache holds sub-folder names and markers, not
// files (about 80 bytes a folder), and can be kept in a file (Cache.Save,
// LoadCache) for a later run. Git metadata and .code-workspace files are
// read again every time.
//
// Git metadata is read straight from HEAD and config rather than by opening
// each repository with go-git: that is many times cheaper, and it works for
// repositories go-git v5 refuses to open (a config with an [extensions]
// section, which `git sparse-checkout` and partial clones write).
//
// detect owns finding; it must not import rootkeeper/app (app reaches it
// only through app.Scanner, which main wires), nor Fyne, nor the MCP SDK.
// Its Candidate, Request, Progress and Summary mirror app's ScanRequest and
// friends field for field so that main converts them with a type conversion.
package detect
