//go:build linux

// Command traytest is a tiny tray host for Rootkeeper's end-to-end test. It
// owns org.kde.StatusNotifierWatcher on the session bus (so the app sees a
// tray), runs the app given after "--", waits for it to register its
// StatusNotifierItem, reads the item's menu with com.canonical.dbusmenu
// GetLayout and waits until the item labelled -click is checked. Then, for
// each line on its standard input: "item LABEL" clicks the item labelled
// LABEL once with Event(id, "clicked"); any other line clicks the -click
// item until it is no longer checked. When its standard input closes it
// clicks Quit and exits with the app's status.
//
// It reports on standard output, one line each:
//
//	registered <bus name> <object path>
//	menu <json of the layout>
//	ready <id> <label>
//	clicked <id> <label>
//	unchecked <label>
//	clicked-item <label>
//	quit <exit code>
//
// Run it inside dbus-run-session, e.g.
//
//	DISPLAY=:N dbus-run-session -- traytest -click alpha -- rootkeeper --state-dir D
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
)

// watcher answers the StatusNotifierWatcher calls an item makes.
type watcher struct {
	registered chan [2]string // bus name, object path
}

// RegisterStatusNotifierItem is called by an item; service is its object
// path (or bus name).
func (w *watcher) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	w.registered <- [2]string{string(sender), service}
	return nil
}

// RegisterStatusNotifierHost accepts a host (there is only us).
func (w *watcher) RegisterStatusNotifierHost(string) *dbus.Error { return nil }

// item is one node of a dbusmenu layout.
type item struct {
	ID       int32  `json:"id"`
	Label    string `json:"label,omitempty"`
	Toggle   string `json:"toggleType,omitempty"`
	State    int32  `json:"toggleState"`
	Enabled  bool   `json:"enabled"`
	Type     string `json:"type,omitempty"`
	Children []item `json:"children,omitempty"`
}

func main() {
	click := flag.String("click", "", "label of the menu item to click")
	timeout := flag.Duration("timeout", 90*time.Second, "how long to wait for each step")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: traytest -click LABEL -- COMMAND [ARGS]")
	}
	log.SetPrefix("traytest: ")
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		log.Fatal(err)
	}
	w := &watcher{registered: make(chan [2]string, 4)}
	if err := conn.Export(w, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher"); err != nil {
		log.Fatal(err)
	}
	reply, err := conn.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		log.Fatalf("could not own org.kde.StatusNotifierWatcher: %v (reply %d)", err, reply)
	}

	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// The command stays in traytest's process group (the app and what it
	// starts): whoever runs traytest in a group of its own ends
	// all of it with one kill of that group, as the tests do, even after
	// traytest itself was killed. In a group of its own, the app outlived
	// every test that killed traytest.
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fail := func(format string, args ...any) {
		log.Printf(format, args...)
		syscall.Kill(0, syscall.SIGKILL) // the group: the command and traytest
		os.Exit(1)
	}

	var reg [2]string
	select {
	case reg = <-w.registered:
	case err := <-exited:
		log.Fatalf("the app exited before registering a tray item: %v", err)
	case <-time.After(*timeout):
		fail("no StatusNotifierItem registered within %v", *timeout)
	}
	sender, path := reg[0], reg[1]
	if !strings.HasPrefix(path, "/") {
		sender, path = path, "/StatusNotifierItem"
	}
	fmt.Printf("registered %s %s\n", sender, path)

	itemObj := conn.Object(sender, dbus.ObjectPath(path))
	v, err := itemObj.GetProperty("org.kde.StatusNotifierItem.Menu")
	if err != nil {
		fail("reading the item's Menu property: %v", err)
	}
	menuPath, ok := v.Value().(dbus.ObjectPath)
	if !ok {
		fail("Menu property is %T, want an object path", v.Value())
	}
	menu := conn.Object(sender, menuPath)

	// Wait for the item to click, checked.
	target, err := waitFor(menu, *timeout, func(root item) (item, bool) {
		it, found := find(root, *click)
		return it, found && it.State == 1
	})
	if err != nil {
		fail("waiting for a checked %q: %v", *click, err)
	}
	fmt.Printf("ready %d %s\n", target.ID, *click)
	stdin := bufio.NewReader(os.Stdin)
	for {
		line, err := stdin.ReadString('\n')
		if err != nil {
			break // closed: quit through the tray
		}
		if label, ok := strings.CutPrefix(strings.TrimSpace(line), "item "); ok {
			clickItem(menu, label, *timeout, fail)
			continue
		}
		untick(menu, *click, *timeout, fail)
	}

	quit, err := waitFor(menu, *timeout, func(root item) (item, bool) { return find(root, "Quit") })
	if err != nil {
		fail("no Quit item: %v", err)
	}
	menu.Call("com.canonical.dbusmenu.Event", 0, quit.ID, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix()))
	select {
	case err := <-exited:
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		fmt.Printf("quit %d\n", code)
		os.Exit(code)
	case <-time.After(*timeout):
		fail("the app did not quit within %v of clicking Quit", *timeout)
	}
}

// clickItem clicks the item labelled label once, and says so:
// "clicked-item LABEL".
func clickItem(menu dbus.BusObject, label string, timeout time.Duration, fail func(string, ...any)) {
	it, err := waitFor(menu, timeout, func(root item) (item, bool) { return find(root, label) })
	if err != nil {
		fail("no item %q: %v", label, err)
	}
	if err := menu.Call("com.canonical.dbusmenu.Event", 0, it.ID, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix())).Err; err != nil {
		fail("Event clicked on %d: %v", it.ID, err)
	}
	fmt.Printf("clicked-item %s\n", label)
}

// untick clicks the checked item labelled label until it is no longer
// checked, and says so: "clicked ID LABEL" per click, then "unchecked
// LABEL".
func untick(menu dbus.BusObject, label string, timeout time.Duration, fail func(string, ...any)) {
	// The app rebuilds its menu whole on every change, so an id can go
	// stale between reading and clicking (the app then ignores the click):
	// read afresh before each try, and try again while it stays checked.
	deadline := time.Now().Add(timeout)
	for {
		if time.Now().After(deadline) {
			fail("%q is still checked %v after the first click", label, timeout)
		}
		root, err := layout(menu)
		it, found := find(root, label)
		if err != nil || !found {
			time.Sleep(100 * time.Millisecond) // caught mid-rebuild
			continue
		}
		if it.State != 1 {
			break
		}
		if err := menu.Call("com.canonical.dbusmenu.Event", 0, it.ID, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix())).Err; err != nil {
			fail("Event clicked on %d: %v", it.ID, err)
		}
		fmt.Printf("clicked %d %s\n", it.ID, label)
		if _, err := waitFor(menu, 3*time.Second, func(root item) (item, bool) {
			it, found := find(root, label)
			return it, found && it.State != 1
		}); err == nil {
			break
		}
	}
	fmt.Printf("unchecked %s\n", label)
}

// waitFor polls the menu's layout until ok finds what it wants, printing
// each new layout.
func waitFor(menu dbus.BusObject, timeout time.Duration, ok func(item) (item, bool)) (item, error) {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		root, err := layout(menu)
		if err == nil {
			if data, _ := json.Marshal(root); string(data) != last {
				last = string(data)
				fmt.Printf("menu %s\n", data)
			}
			if it, found := ok(root); found {
				return it, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return item{}, errors.New("timed out")
}

// layout reads the whole menu with GetLayout(0, -1, []).
func layout(menu dbus.BusObject) (item, error) {
	var revision uint32
	var raw []any
	call := menu.Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{})
	if call.Err != nil {
		return item{}, call.Err
	}
	if len(call.Body) != 2 {
		return item{}, fmt.Errorf("GetLayout returned %d values", len(call.Body))
	}
	revision, _ = call.Body[0].(uint32)
	_ = revision
	raw, ok := call.Body[1].([]any)
	if !ok {
		return item{}, fmt.Errorf("layout is %T", call.Body[1])
	}
	return parse(raw)
}

// parse reads one (ia{sv}av) layout node.
func parse(node []any) (item, error) {
	if len(node) != 3 {
		return item{}, fmt.Errorf("layout node has %d fields", len(node))
	}
	it := item{Enabled: true}
	it.ID, _ = node[0].(int32)
	props, _ := node[1].(map[string]dbus.Variant)
	for k, v := range props {
		switch k {
		case "label":
			it.Label, _ = v.Value().(string)
		case "toggle-type":
			it.Toggle, _ = v.Value().(string)
		case "toggle-state":
			it.State, _ = v.Value().(int32)
		case "enabled":
			it.Enabled, _ = v.Value().(bool)
		case "type":
			it.Type, _ = v.Value().(string)
		}
	}
	children, _ := node[2].([]dbus.Variant)
	for _, c := range children {
		sub, ok := c.Value().([]any)
		if !ok {
			return item{}, fmt.Errorf("child is %T", c.Value())
		}
		ci, err := parse(sub)
		if err != nil {
			return item{}, err
		}
		it.Children = append(it.Children, ci)
	}
	return it, nil
}

// find returns the first item labelled label (or "label (something)",
// as a root with a failed health check is shown), depth first.
func find(root item, label string) (item, bool) {
	if root.Label == label || strings.HasPrefix(root.Label, label+" (") {
		return root, true
	}
	for _, c := range root.Children {
		if it, ok := find(c, label); ok {
			return it, true
		}
	}
	return item{}, false
}
