package mcp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
)

// resourceEvents collects what OnResourceEvent reports, as "server uri".
type resourceEvents chan string

func watchResources(t testing.TB, m *Manager) resourceEvents {
	ch := make(resourceEvents, 1000)
	stop := m.OnResourceEvent(func(server, uri string) {
		select {
		case ch <- server + " " + uri:
		default:
		}
	})
	t.Cleanup(stop)
	return ch
}

// await waits until want is reported. With poke, for what has no event to
// wait on (a subscription acknowledged on a stream of its own), poke is
// done again before each look (apptest.Eventually's pace).
func (ch resourceEvents) await(t testing.TB, want string, poke func()) {
	t.Helper()
	var seen []string
	heard := func() bool {
		for {
			select {
			case ev := <-ch:
				if ev == want {
					return true
				}
				seen = append(seen, ev)
			default:
				return false
			}
		}
	}
	if poke != nil {
		apptest.Eventually(t, fmt.Sprintf("resource event %q", want), func() (bool, string) {
			poke()
			return heard(), fmt.Sprintf("saw %q", seen)
		})
		return
	}
	hung := time.After(wait)
	for {
		select {
		case ev := <-ch:
			if ev == want {
				return
			}
			seen = append(seen, ev)
		case <-hung:
			t.Fatalf("no resource event %q within %v (hung?); saw %q", want, wait, seen)
		}
	}
}

var testBlob = []byte{0, 1, 2, 0xfe, 0xff, 'b', 'i', 'n'}

// resourceServer is an in-process go-sdk server speaking one protocol
// version, with five text documents and a blob served two per page, a
// template, subscriptions, and, from 2026-07-28, test://roots, which
// answers only once it has the client's roots through an input request.
func resourceServer(version string) (*sdk.Server, func(app.Server) (sdk.Transport, error)) {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-resource-server", Version: version}, &sdk.ServerOptions{
		SupportedProtocolVersions: []string{version},
		PageSize:                  2,
		SubscribeHandler:          func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler:        func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	for i := 1; i <= 5; i++ {
		uri := fmt.Sprintf("test://doc/%d", i)
		s.AddResource(&sdk.Resource{URI: uri, Name: fmt.Sprintf("doc %d", i), MIMEType: "text/plain", Size: 5},
			func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: fmt.Sprintf("doc %d", i)}}}, nil
			})
	}
	s.AddResource(&sdk.Resource{URI: "test://bin", Name: "bin", MIMEType: "application/octet-stream"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://bin", MIMEType: "application/octet-stream", Blob: testBlob}}}, nil
		})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://doc/{n}", Name: "docs", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return nil, sdk.ResourceNotFoundError("test://doc/?")
		})
	if version >= modernVersion {
		s.AddResource(&sdk.Resource{URI: "test://roots", Name: "roots", MIMEType: "application/json"},
			func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				resp, ok := req.Params.InputResponses["roots"]
				if !ok {
					return &sdk.ReadResourceResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}}, nil
				}
				res, _ := resp.(*sdk.ListRootsResult)
				if res == nil {
					return nil, fmt.Errorf("input response %T is not a roots list", resp)
				}
				data, _ := json.Marshal(res.Roots)
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://roots", MIMEType: "application/json", Text: string(data)}}}, nil
			})
	}
	return s, func(app.Server) (sdk.Transport, error) {
		ct, st := sdk.NewInMemoryTransports()
		go s.Run(context.Background(), st)
		return ct, nil
	}
}

func uris(list []app.ResourceInfo) []string {
	var out []string
	for _, r := range list {
		out = append(out, r.URI)
	}
	return sorted(out)
}

func resourceCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// Listing across pages, reading text and blobs, templates, errors,
// subscriptions and list changes, on every protocol version; from
// 2026-07-28 a read that needs the roots gets them through the input
// request loop, and the answer is audited.
func TestResourcesEveryVersion(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t)
			root := mkRoot(t, "seen by resources")
			e.update(func(s *app.State) error {
				return s.AddServer(app.Server{Name: "go", Type: app.TransportStdio, Command: "unused"})
			})
			e.addRoots(root)
			e.grant("go", root)
			srv, transport := resourceServer(v)
			opts := e.fastOptions()
			opts.NewTransport = transport
			m := e.start(opts)
			events := watchResources(t, m)
			e.waitConnected("go")
			ctx := resourceCtx(t)
			modern := v >= modernVersion

			list, err := m.ListResources(ctx, "go")
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"test://bin", "test://doc/1", "test://doc/2", "test://doc/3", "test://doc/4", "test://doc/5"}
			if modern {
				want = sorted(append(want, "test://roots"))
			}
			if diff := cmp.Diff(want, uris(list)); diff != "" {
				t.Errorf("ListResources across pages of 2 (-want +got):\n%s", diff)
			}
			i := slices.IndexFunc(list, func(r app.ResourceInfo) bool { return r.URI == "test://doc/3" })
			if i < 0 || list[i] != (app.ResourceInfo{URI: "test://doc/3", Name: "doc 3", MIMEType: "text/plain", Size: 5}) {
				t.Errorf("doc 3 listed as %+v", list[max(i, 0)])
			}

			got, err := m.ReadResource(ctx, "go", "test://doc/3")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]app.ResourceContent{{URI: "test://doc/3", MIMEType: "text/plain", Text: "doc 3"}}, got); diff != "" {
				t.Errorf("read text (-want +got):\n%s", diff)
			}
			got, err = m.ReadResource(ctx, "go", "test://bin")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || !got[0].IsBlob() || !bytes.Equal(got[0].Blob, testBlob) || got[0].MIMEType != "application/octet-stream" {
				t.Errorf("read blob = %+v, want %v", got, testBlob)
			}
			if _, err := m.ReadResource(ctx, "go", "test://nothing"); err == nil || !strings.Contains(err.Error(), `server "go"`) || !strings.Contains(err.Error(), "test://nothing") {
				t.Errorf("reading an unknown URI: %v, want an error naming the server and the URI", err)
			}

			tmpl, err := m.ListResourceTemplates(ctx, "go")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]app.ResourceTemplate{{URITemplate: "test://doc/{n}", Name: "docs", MIMEType: "text/plain"}}, tmpl); diff != "" {
				t.Errorf("templates (-want +got):\n%s", diff)
			}

			// List changes come before the subscription: a go-sdk 1.8.0
			// server forgets a 2026-07-28 session's list_changed stream
			// when any of its subscriptions/listen streams ends, which
			// Unsubscribe does.
			srv.AddResource(&sdk.Resource{URI: "test://doc/new", Name: "new"},
				func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
					return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://doc/new", Text: "new"}}}, nil
				})
			events.await(t, "go ", nil)
			list, err = m.ListResources(ctx, "go")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(uris(list), "test://doc/new") {
				t.Errorf("after list_changed, test://doc/new is not listed: %q", uris(list))
			}

			if err := m.Subscribe(ctx, "go", "test://doc/1"); err != nil {
				t.Fatal(err)
			}
			// From 2026-07-28 the subscription is acknowledged on a
			// stream: announce the update until it arrives.
			events.await(t, "go test://doc/1", func() {
				srv.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: "test://doc/1"})
			})
			if err := m.Unsubscribe(ctx, "go", "test://doc/1"); err != nil {
				t.Fatal(err)
			}

			if !modern {
				return
			}
			got, err = m.ReadResource(ctx, "go", "test://roots")
			if err != nil {
				t.Fatalf("read test://roots: %v", err)
			}
			var roots []sdk.Root
			if len(got) != 1 || json.Unmarshal([]byte(got[0].Text), &roots) != nil || len(roots) != 1 || roots[0].URI != app.URIFromPath(root) {
				t.Errorf("test://roots read %+v, want the one granted root %s", got, app.URIFromPath(root))
			}
			entries, err := audit.Read(e.dir, "go")
			if err != nil || len(entries) == 0 {
				t.Fatalf("audit: %d entries, %v", len(entries), err)
			}
			if last := entries[len(entries)-1]; last.Via != audit.ViaInputRequest || !slices.Equal(last.Roots, []string{app.URIFromPath(root)}) {
				t.Errorf("last audit entry %+v, want the roots sent via %s", last, audit.ViaInputRequest)
			}
		})
	}
}

// A server without the resources capability, one without subscriptions,
// an unknown server and a stopped one each get a clear error at once.
func TestResourcesErrors(t *testing.T) {
	e := newEnv(t)
	e.update(func(s *app.State) error {
		for _, n := range []string{"plain", "nosub", "stopped"} {
			if err := s.AddServer(app.Server{Name: n, Type: app.TransportStdio, Command: "unused"}); err != nil {
				return err
			}
		}
		return nil
	})
	opts := e.fastOptions()
	opts.NewTransport = func(srv app.Server) (sdk.Transport, error) {
		s := sdk.NewServer(&sdk.Implementation{Name: srv.Name, Version: "1"}, nil)
		if srv.Name == "nosub" {
			s.AddResource(&sdk.Resource{URI: "test://a", Name: "a"},
				func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
					return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://a", Text: "a"}}}, nil
				})
		}
		ct, st := sdk.NewInMemoryTransports()
		go s.Run(context.Background(), st)
		return ct, nil
	}
	m := e.start(opts)
	for _, n := range []string{"plain", "nosub", "stopped"} {
		e.waitConnected(n)
	}
	m.Stop("stopped")
	apptest.Eventually(t, "stopped stops", func() (bool, string) {
		st := e.status("stopped")
		return st.State == app.ServerStopped, string(st.State)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"no capability", func() error { _, err := m.ListResources(ctx, "plain"); return err }, `server "plain" offers no resources`},
		{"no capability read", func() error { _, err := m.ReadResource(ctx, "plain", "test://a"); return err }, `server "plain" offers no resources`},
		{"no subscriptions", func() error { return m.Subscribe(ctx, "nosub", "test://a") }, `server "nosub" does not offer resource subscriptions`},
		{"unknown", func() error { _, err := m.ListResources(ctx, "x"); return err }, `no server "x"`},
		{"stopped", func() error { _, err := m.ReadResource(ctx, "stopped", "test://a"); return err }, `server "stopped" is not connected`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	if ctx.Err() != nil {
		t.Errorf("an error took the whole deadline: %v", ctx.Err())
	}
	// The capable server still reads.
	if got, err := m.ReadResource(ctx, "nosub", "test://a"); err != nil || len(got) != 1 || got[0].Text != "a" {
		t.Errorf("nosub read: %+v, %v", got, err)
	}
}

// The real server-everything: its documents are listed with their MIME
// types and read as text, a dynamic blob and a gzipped session resource
// decode to the right bytes, a subscription brings updates once the
// server's simulation is on, and an unknown URI is an error.
func TestServerEverythingResources(t *testing.T) {
	bin := apptest.NPMServer(t, "mcp-server-everything")
	e := newEnv(t)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "everything", Type: app.TransportStdio, Command: bin, Args: []string{"stdio"}})
	})
	m := e.start(e.fastOptions())
	events := watchResources(t, m)
	e.waitConnected("everything")
	ctx := resourceCtx(t)

	list, err := m.ListResources(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	const doc = "demo://resource/static/document/instructions.md"
	i := slices.IndexFunc(list, func(r app.ResourceInfo) bool { return r.URI == doc })
	if i < 0 || list[i].MIMEType != "text/markdown" || list[i].Name != "instructions.md" {
		t.Fatalf("%s not listed as instructions.md, text/markdown: %+v", doc, list)
	}
	if len(list) < 5 {
		t.Errorf("only %d resources listed: %q", len(list), uris(list))
	}

	got, err := m.ReadResource(ctx, "everything", doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].IsBlob() || got[0].MIMEType != "text/markdown" || len(got[0].Text) < 100 {
		t.Errorf("read %s = %+v, want markdown text", doc, got)
	}

	got, err = m.ReadResource(ctx, "everything", "demo://resource/dynamic/blob/7")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].IsBlob() || !strings.HasPrefix(string(got[0].Blob), "Resource 7: This is a base64 blob") || got[0].MIMEType == "" {
		t.Errorf("dynamic blob 7 = %+v", got)
	}

	tmpl, err := m.ListResourceTemplates(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tmpl, func(t app.ResourceTemplate) bool {
		return t.URITemplate == "demo://resource/dynamic/blob/{resourceId}"
	}) {
		t.Errorf("templates %+v lack the dynamic blob", tmpl)
	}

	// gzip-file-as-resource registers a session resource (a blob), which
	// also changes the list.
	payload := strings.Repeat("rootkeeper resources ", 50)
	if _, err := callText(t, m, "everything", "gzip-file-as-resource", map[string]any{
		"name": "rk.txt.gz", "data": "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte(payload)),
	}); err != nil {
		t.Fatal(err)
	}
	events.await(t, "everything ", nil)
	const session = "demo://resource/session/rk.txt.gz"
	list, err = m.ListResources(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(uris(list), session) {
		t.Errorf("%s not listed after list_changed: %q", session, uris(list))
	}
	got, err = m.ReadResource(ctx, "everything", session)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].MIMEType != "application/gzip" || !got[0].IsBlob() {
		t.Fatalf("session resource = %+v, want an application/gzip blob", got)
	}
	zr, err := gzip.NewReader(bytes.NewReader(got[0].Blob))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := io.ReadAll(zr); err != nil || string(plain) != payload {
		t.Errorf("gunzipped session resource = %q, %v", plain, err)
	}

	if err := m.Subscribe(ctx, "everything", doc); err != nil {
		t.Fatal(err)
	}
	if _, err := callText(t, m, "everything", "toggle-subscriber-updates", nil); err != nil {
		t.Fatal(err)
	}
	events.await(t, "everything "+doc, nil)
	if err := m.Unsubscribe(ctx, "everything", doc); err != nil {
		t.Fatal(err)
	}

	if _, err := m.ReadResource(ctx, "everything", "demo://resource/static/document/no-such.md"); err == nil || !strings.Contains(err.Error(), `server "everything"`) {
		t.Errorf("reading an unknown URI: %v, want an error naming the server", err)
	}
}
