package hosts

import (
	"slices"

	"rootkeeper/app"
	"rootkeeper/app/secrets/spot"
)

// RepairTakenOff puts back the folders an earlier Rootkeeper (state version
// 1) took off the configurations of the servers it protected: the backup
// of the host's file holds each entry as the person wrote it, so the
// server's arguments and env are restored from it where the stored ones
// are that entry with folders taken off, and its folders become slots
// (decisions already made about them still count). Every server marked
// app.Server.FoldersTakenOff is looked at once; one that cannot be put
// back stays held with its lost folders (app.HoldOf says how to define it
// again). home resolves ~. It returns the names of the servers repaired.
func RepairTakenOff(store *app.Store, home string) ([]string, error) {
	st, err := store.Load()
	if err != nil || !slices.ContainsFunc(st.Servers, func(s app.Server) bool { return s.FoldersTakenOff }) {
		return nil, err
	}
	rec, err := loadRecord(store.Dir())
	if err != nil {
		return nil, err
	}
	originals := map[string]Entry{}
	for _, fr := range rec.Files {
		h, ok := Lookup(fr.Host)
		if !ok {
			continue
		}
		data, err := readHostFile(fr.Backup, MaxFileBytes)
		if err != nil {
			continue
		}
		d, err := parseDoc(h.formatOf(fr.Path), fr.Path, fr.Project, data)
		if err != nil {
			continue
		}
		for _, er := range fr.Entries {
			if len(er.Key) == 0 {
				continue
			}
			e := readEntry(h, d, serverTable{key: er.Key[:len(er.Key)-1]}, er.Key[len(er.Key)-1])
			if e.Skip == "" && e.Server.Type == app.TransportStdio {
				originals[er.Name] = e
			}
		}
	}
	var repaired []string
	_, err = store.Update(func(s *app.State) error {
		repaired = nil
		for _, srv := range s.Servers {
			if !srv.FoldersTakenOff {
				continue
			}
			fixed := srv
			if e, ok := originals[srv.Name]; ok && takenOffFrom(e.Server, srv, home) {
				fixed.Args = slices.Clone(e.Server.Args)
				for k, v := range e.HostEnv {
					if _, has := fixed.Env[k]; !has && app.NamesSlot(srv, v, home) {
						if fixed.Env == nil {
							fixed.Env = map[string]string{}
						}
						fixed.Env[k] = v
					}
				}
				repaired = append(repaired, srv.Name)
			}
			// The same program as far as consent goes: its decisions stay.
			if _, err := s.PutServer(fixed, app.PutOptions{Replace: true, Repair: true, KeepDecisions: true, Home: home}); err != nil {
				return err
			}
		}
		return nil
	})
	return repaired, err
}

// takenOffFrom reports whether stored is orig with some folders taken off
// its command line, as version 1 did: its arguments are orig's in order,
// less arguments that are no flags.
func takenOffFrom(orig, stored app.Server, home string) bool {
	if orig.Command != stored.Command || orig.Cwd != stored.Cwd {
		return false
	}
	// Secrets compare equal to the references they were sealed into.
	origShown, storedShown := spot.ShowArgs(stored.Name, orig.Args), spot.ShowArgs(stored.Name, stored.Args)
	i := 0
	for j, a := range orig.Args {
		if i < len(stored.Args) && storedShown[i] == origShown[j] {
			i++
			continue
		}
		probe := orig
		probe.Args, probe.Env = []string{a}, nil
		if len(app.FindSlots(probe, home)) == 0 {
			// Not a folder (now): the stored command line is not this
			// entry's less its folders.
			return false
		}
	}
	return i == len(stored.Args)
}
