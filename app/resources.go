package app

import "context"

// Resources (MCP "resources/*") are data a server offers its client, each
// named by a URI: the person can list a connected server's resources and
// read one, from the window or the command line. These types are the MCP
// SDK's, without the SDK; package mcp converts.

// ResourceInfo is one entry of a server's resources/list.
type ResourceInfo struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is the size in bytes the server announced; 0 when it did not.
	Size int64 `json:"size,omitempty"`
}

// ResourceTemplate is one entry of a server's resources/templates/list: a
// URI template (RFC 6570) for resources the server can make on demand.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// ResourceContent is one part of a resources/read answer: text, or binary
// data (Blob, already decoded from base64). In JSON, Blob is base64.
type ResourceContent struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"`
}

// IsBlob reports whether the content is binary.
func (c ResourceContent) IsBlob() bool { return c.Blob != nil }

// ResourceBrowser lists and reads the resources of the running app's
// servers, by server name. mcp.Manager implements it; main hands it to the
// GUI and the control socket. Errors name the server.
type ResourceBrowser interface {
	ListResources(ctx context.Context, server string) ([]ResourceInfo, error)
	ReadResource(ctx context.Context, server, uri string) ([]ResourceContent, error)
}

// ResourceWatcher is what a ResourceBrowser may also offer: being told when
// a server says its resources changed. fn gets the server and the URI of an
// updated resource, or an empty URI when the list itself changed; it runs on
// the MCP client's goroutines and must not block. The returned func stops
// the calls.
type ResourceWatcher interface {
	OnResourceEvent(fn func(server, uri string)) (stop func())
}
