package audit

// readFile appends the entries of server (all for "") in the one file at
// path to out: what a test reads of the trail or the noise alone.
func readFile(path, server string, out []Entry) ([]Entry, error) {
	var f Follower
	all, err := f.appendNew(0, path, nil)
	for _, e := range all {
		if server == "" || e.Server == server {
			out = append(out, e)
		}
	}
	return out, err
}
