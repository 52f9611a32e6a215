package cli

import (
	"time"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// KeptDataView is a data folder kept aside (app.KeptData) in `status
// --json` and `servers data NAME --json`.
type KeptDataView struct {
	// Name names it in `servers data NAME use|remove FOLDER`.
	Name string `json:"name"`
	// Path is where it is.
	Path string `json:"path"`
	// Program is the program whose data it holds (app.ProgramID); empty
	// when not known.
	Program string    `json:"program,omitempty"`
	At      time.Time `json:"at"`
}

// DataView is what `servers data NAME --json` prints.
type DataView struct {
	Server string `json:"server"`
	// Data is its data folder, Program the program it belongs to.
	Data    string         `json:"data"`
	Program string         `json:"program"`
	Kept    []KeptDataView `json:"kept"`
}

// keptViews are srv's kept-aside data folders in stateDir.
func keptViews(srv app.Server, stateDir string) []KeptDataView {
	out := []KeptDataView{}
	for _, k := range srv.KeptData {
		p, err := app.KeptDataFolder(stateDir, srv.Name, k.Name)
		if err != nil {
			continue
		}
		out = append(out, KeptDataView{Name: k.Name, Path: p, Program: k.Program, At: k.At})
	}
	return out
}

// keptCommands are the commands that answer a kept-aside data folder of
// server: give it to the program the server runs now, or remove it. The
// folder is named when the server has more than one.
func keptCommands(server string, k KeptDataView, many bool) (use, remove string) {
	which := ""
	if many {
		which = " " + words.ShellQuote(k.Name)
	}
	base := "rootkeeper servers data " + words.ShellQuote(server)
	return base + " use" + which, base + " remove" + which
}

// printKeptAside says that server's data folder was kept aside when it was
// put (nothing when kept is nil).
func (c *command) printKeptAside(server string, kept *app.KeptData) {
	if kept == nil {
		return
	}
	p, err := app.KeptDataFolder(c.store.Dir(), server, kept.Name)
	if err != nil {
		return
	}
	c.printf("%s now runs another program: it starts with an empty data folder, and the data of %s is kept aside in %s (give it to %s: `rootkeeper servers data %s use`; remove it: `rootkeeper servers data %s remove`)\n",
		server, kept.ProgramText(), p, server, words.ShellQuote(server), words.ShellQuote(server))
}

// serversData is `servers data NAME [--json]`, which shows a server's data
// folder and the data folders of earlier programs kept aside, and `servers
// data NAME use|remove [FOLDER]`, which gives a kept folder to the program
// the server runs now (what its data folder held is kept aside in turn) or
// removes it. FOLDER (a kept folder's name or path) is needed only when
// there are several.
func (c *command) serversData(args []string) error {
	f := newFlags("servers data")
	asJSON := f.Bool("json")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("%q needs NAME", "servers data")
	}
	name := pos[0]
	if len(pos) == 1 {
		return c.showData(name, *asJSON)
	}
	verb := pos[1]
	if verb != "use" && verb != "remove" {
		return usagef("unknown verb %q for %q (want use or remove)", verb, "servers data "+name)
	}
	if len(pos) > 3 {
		return usagef("unexpected argument %q for %q", pos[3], "servers data "+name+" "+verb)
	}
	which := ""
	if len(pos) == 3 {
		which = pos[2]
	}
	dir := c.store.Dir()
	var aside *app.KeptData
	var removed string
	if _, err := c.update(func(s *app.State) error {
		var err error
		if verb == "use" {
			aside, err = s.UseKeptData(dir, name, which, c.env.Home, time.Now().UTC())
		} else {
			removed, err = s.RemoveKeptData(dir, name, which)
		}
		return err
	}); err != nil {
		return err
	}
	if verb == "remove" {
		c.printf("removed %s\n", removed)
		return nil
	}
	data, _ := app.ServerDataFolder(dir, name)
	c.printf("%s has the kept data now, in its data folder %s; it restarts with it\n", name, data)
	if aside != nil {
		p, _ := app.KeptDataFolder(dir, name, aside.Name)
		c.printf("what its data folder held is kept aside in turn: %s (`rootkeeper servers data %s` lists what is kept)\n", p, words.ShellQuote(name))
	}
	return nil
}

// showData prints server name's data folder and its kept-aside ones.
func (c *command) showData(name string, asJSON bool) error {
	st, err := c.store.Load()
	if err != nil {
		return err
	}
	srv, ok := st.Server(name)
	if !ok {
		return &app.InputError{Msg: "no server \"" + name + "\""}
	}
	data, err := app.ServerDataFolder(c.store.Dir(), name)
	if err != nil {
		return &app.InputError{Msg: err.Error()}
	}
	v := DataView{Server: name, Data: data, Program: srv.DataProgram, Kept: keptViews(srv, c.store.Dir())}
	if v.Program == "" {
		v.Program = app.ProgramID(srv)
	}
	if asJSON {
		return c.printJSON(v)
	}
	c.printf("%s's data folder: %s (the data of %s)\n", name, data, v.Program)
	if len(v.Kept) == 0 {
		c.printf("no data folder of an earlier program is kept aside\n")
	}
	for _, k := range v.Kept {
		use, remove := keptCommands(name, k, len(v.Kept) > 1)
		c.printf("kept aside: %s — the data of %s, kept aside %s\n", k.Path, (app.KeptData{Program: k.Program}).ProgramText(), k.At.Local().Format("2006-01-02 15:04"))
		c.printf("  give it to %s: %s\n  remove it: %s\n", name, use, remove)
	}
	return nil
}
