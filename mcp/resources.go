package mcp

import (
	"context"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
)

// Limits of one listing: a server that keeps handing out cursors is cut off
// with an error rather than followed forever.
const (
	maxListedResources = 10_000
	maxListPages       = 1_000
)

// resourceSession is the live session of a server that declared the
// resources capability, or an error naming the server.
func (m *Manager) resourceSession(server string) (*sdk.ClientSession, *sdk.ResourceCapabilities, error) {
	a := m.adapter(server)
	if a == nil {
		return nil, nil, fmt.Errorf("no server %q", server)
	}
	cs := a.currentSession()
	if cs == nil {
		return nil, nil, fmt.Errorf("server %q is not connected", server)
	}
	res := cs.InitializeResult()
	if res == nil || res.Capabilities == nil || res.Capabilities.Resources == nil {
		return nil, nil, fmt.Errorf("server %q offers no resources (it did not declare the resources capability)", server)
	}
	return cs, res.Capabilities.Resources, nil
}

// ListResources lists every resource of a connected server, following the
// cursor from page to page (at most 10,000 resources in 1,000 pages).
func (m *Manager) ListResources(ctx context.Context, server string) ([]app.ResourceInfo, error) {
	cs, _, err := m.resourceSession(server)
	if err != nil {
		return nil, err
	}
	out := []app.ResourceInfo{}
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		res, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("server %q: resources/list: %w", server, err)
		}
		for _, r := range res.Resources {
			if r == nil {
				continue
			}
			out = append(out, app.ResourceInfo{URI: r.URI, Name: r.Name, Title: r.Title,
				Description: r.Description, MIMEType: r.MIMEType, Size: r.Size})
		}
		if len(out) > maxListedResources {
			return nil, fmt.Errorf("server %q lists more than %d resources", server, maxListedResources)
		}
		if res.NextCursor == "" {
			return out, nil
		}
		if seen[res.NextCursor] || page >= maxListPages {
			return nil, fmt.Errorf("server %q: resources/list does not end (page %d, cursor %q)", server, page, res.NextCursor)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// ListResourceTemplates lists every resource template of a connected
// server, with the same bounds as ListResources.
func (m *Manager) ListResourceTemplates(ctx context.Context, server string) ([]app.ResourceTemplate, error) {
	cs, _, err := m.resourceSession(server)
	if err != nil {
		return nil, err
	}
	out := []app.ResourceTemplate{}
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		res, err := cs.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("server %q: resources/templates/list: %w", server, err)
		}
		for _, t := range res.ResourceTemplates {
			if t == nil {
				continue
			}
			out = append(out, app.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name,
				Description: t.Description, MIMEType: t.MIMEType})
		}
		if len(out) > maxListedResources {
			return nil, fmt.Errorf("server %q lists more than %d resource templates", server, maxListedResources)
		}
		if res.NextCursor == "" {
			return out, nil
		}
		if seen[res.NextCursor] || page >= maxListPages {
			return nil, fmt.Errorf("server %q: resources/templates/list does not end (page %d, cursor %q)", server, page, res.NextCursor)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// ReadResource reads one resource of a connected server. It goes through
// the adapter's sending middleware, so input requests a 2026-07-28 server
// embeds in the result (SEP-2322) are fulfilled like any roots/list.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) ([]app.ResourceContent, error) {
	cs, _, err := m.resourceSession(server)
	if err != nil {
		return nil, err
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, fmt.Errorf("server %q: resources/read %s: %w", server, uri, err)
	}
	out := make([]app.ResourceContent, 0, len(res.Contents))
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		rc := app.ResourceContent{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
		if c.Blob != nil {
			rc.Blob = c.Blob
		}
		out = append(out, rc)
	}
	return out, nil
}

// Subscribe asks a connected server to report changes of the resource uri
// (notifications/resources/updated, delivered to OnResourceEvent). A server
// that does not offer subscriptions gets an error, not a request.
func (m *Manager) Subscribe(ctx context.Context, server, uri string) error {
	cs, caps, err := m.resourceSession(server)
	if err != nil {
		return err
	}
	if !caps.Subscribe {
		return fmt.Errorf("server %q does not offer resource subscriptions", server)
	}
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		return fmt.Errorf("server %q: resources/subscribe %s: %w", server, uri, err)
	}
	return nil
}

// Unsubscribe ends a Subscribe.
func (m *Manager) Unsubscribe(ctx context.Context, server, uri string) error {
	cs, caps, err := m.resourceSession(server)
	if err != nil {
		return err
	}
	if !caps.Subscribe {
		return fmt.Errorf("server %q does not offer resource subscriptions", server)
	}
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}); err != nil {
		return fmt.Errorf("server %q: resources/unsubscribe %s: %w", server, uri, err)
	}
	return nil
}

// resourceListeners are the functions OnResourceEvent registered.
type resourceListeners struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(server, uri string)
}

// OnResourceEvent calls fn whenever a server sends
// notifications/resources/updated (uri is the resource's) or
// notifications/resources/list_changed (uri is empty). fn runs on the
// server's connection goroutine and must not block; several listeners may
// be called concurrently for different servers. stop removes fn.
func (m *Manager) OnResourceEvent(fn func(server, uri string)) (stop func()) {
	l := &m.resourceListeners
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fns == nil {
		l.fns = map[int]func(string, string){}
	}
	id := l.next
	l.next++
	l.fns[id] = fn
	return func() {
		l.mu.Lock()
		delete(l.fns, id)
		l.mu.Unlock()
	}
}

func (m *Manager) resourceEvent(server, uri string) {
	l := &m.resourceListeners
	l.mu.Lock()
	fns := make([]func(string, string), 0, len(l.fns))
	for _, fn := range l.fns {
		fns = append(fns, fn)
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn(server, uri)
	}
}

// resourceUpdated and resourceListChanged are the adapter's SDK
// notification handlers. A retired adapter's session says nothing.
func (a *adapter) resourceUpdated(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
	if req == nil || req.Params == nil || !a.current() {
		return
	}
	a.m.resourceEvent(a.cfg.Name, req.Params.URI)
}

// resourceListChanged passes a server's resources/list_changed on, at most
// once a second however many it sends (see coalescer): each one makes the
// Resources dialog list the resources again.
func (a *adapter) resourceListChanged(context.Context, *sdk.ResourceListChangedRequest) {
	a.listChanged.fire()
}

// current reports whether a still serves its server.
func (a *adapter) current() bool { return a.m.adapter(a.cfg.Name) == a }

var (
	_ app.ResourceBrowser = (*Manager)(nil)
	_ app.ResourceWatcher = (*Manager)(nil)
)
