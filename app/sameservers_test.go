package app

import (
	"reflect"
	"testing"
	"time"
)

// fullServer is a server with every field set, lists and maps holding
// something, so that each can be changed.
func fullServer() Server {
	at := time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)
	return Server{Name: "s", Type: TransportStdio, Command: "c", Args: []string{"a"}, Env: map[string]string{"K": "v"},
		Cwd: "/w", Confine: true, ConfineRequired: true, URL: "u", Headers: map[string]string{"H": "v"},
		RootsMode: RootsProtocol, Sampling: SamplingReview, HostRoots: HostRootsFollow,
		Network:  &NetworkSetting{Mode: NetworkAsk, Allow: []string{"a"}, Deny: []string{"d"}},
		KeepArgs: []string{"k"}, Slots: []Slot{{Path: "/p", Given: "/p", Arg: 1}}, Lost: []string{"/l"},
		FoldersTakenOff: true, DataProgram: "prog", KeptData: []KeptData{{Name: "n", Program: "p", At: at}}}
}

// variants are copies of v (a server, or what it holds), each with one
// thing changed: every field, down to those of the structs its lists and
// settings hold, set to another value, a nil list or map made empty and an
// empty one nil.
func variants(t *testing.T, v reflect.Value, path string, out func(path string, changed func(reflect.Value))) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			out(path, func(c reflect.Value) { c.Set(reflect.ValueOf(c.Interface().(time.Time).Add(time.Nanosecond))) })
			return
		}
		for i := range v.NumField() {
			i := i
			variants(t, v.Field(i), path+"."+v.Type().Field(i).Name, func(p string, changed func(reflect.Value)) {
				out(p, func(c reflect.Value) { changed(c.Field(i)) })
			})
		}
	case reflect.String:
		out(path, func(c reflect.Value) { c.SetString(c.String() + "x") })
	case reflect.Bool:
		out(path, func(c reflect.Value) { c.SetBool(!c.Bool()) })
	case reflect.Int:
		out(path, func(c reflect.Value) { c.SetInt(c.Int() + 1) })
	case reflect.Slice:
		out(path+" nil", func(c reflect.Value) { c.Set(reflect.Zero(c.Type())) })
		out(path+" empty", func(c reflect.Value) { c.Set(reflect.MakeSlice(c.Type(), 0, 0)) })
		out(path+" longer", func(c reflect.Value) { c.Set(reflect.Append(c, reflect.Zero(c.Type().Elem()))) })
		variants(t, v.Index(0), path+"[0]", func(p string, changed func(reflect.Value)) {
			out(p, func(c reflect.Value) {
				fresh := reflect.MakeSlice(c.Type(), c.Len(), c.Len())
				reflect.Copy(fresh, c)
				changed(fresh.Index(0))
				c.Set(fresh)
			})
		})
	case reflect.Map:
		out(path+" nil", func(c reflect.Value) { c.Set(reflect.Zero(c.Type())) })
		out(path+" empty", func(c reflect.Value) { c.Set(reflect.MakeMap(c.Type())) })
		out(path+" value", func(c reflect.Value) {
			m := reflect.MakeMap(c.Type())
			for _, k := range c.MapKeys() {
				m.SetMapIndex(k, reflect.ValueOf(c.MapIndex(k).String()+"x"))
			}
			c.Set(m)
		})
	case reflect.Pointer:
		out(path+" nil", func(c reflect.Value) { c.Set(reflect.Zero(c.Type())) })
		variants(t, v.Elem(), path, func(p string, changed func(reflect.Value)) {
			out(p, func(c reflect.Value) {
				fresh := reflect.New(c.Type().Elem())
				fresh.Elem().Set(c.Elem())
				changed(fresh.Elem())
				c.Set(fresh)
			})
		})
	default:
		t.Fatalf("%s: a %v, which the test cannot change: teach it", path, v.Kind())
	}
}

// Every field of a server, and of what it holds, is compared: changing any
// one of them makes SameServers false, as it makes reflect.DeepEqual; and
// copies that are deeply equal are the same.
func TestSameServersSeesEveryField(t *testing.T) {
	base := fullServer()
	st := State{Servers: []Server{base}}
	if c := st.Clone(); !SameServers(c.Servers, st.Servers) {
		t.Fatal("a clone of the servers is not the same")
	}
	n := 0
	variants(t, reflect.ValueOf(base), "Server", func(path string, changed func(reflect.Value)) {
		n++
		c := st.Clone()
		changed(reflect.ValueOf(&c.Servers[0]).Elem())
		if reflect.DeepEqual(c.Servers, st.Servers) {
			t.Fatalf("%s: the change did not change the server", path)
		}
		if SameServers(c.Servers, st.Servers) || SameServers(st.Servers, c.Servers) {
			t.Errorf("%s differs and SameServers says the same", path)
		}
	})
	if n < 50 {
		t.Fatalf("only %d changes tried", n)
	}
	if !SameServers(nil, nil) || !SameServers([]Server{}, []Server{}) || SameServers(nil, []Server{}) ||
		SameServers(st.Servers, nil) || SameServers(st.Servers, append(st.Clone().Servers, base)) {
		t.Error("lists of no server, or of different lengths, compared wrong")
	}
}
