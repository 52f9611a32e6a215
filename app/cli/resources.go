package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/control"
	"rootkeeper/app/words"
)

// ResourcesRequest is the argument of the control socket's "resources" op:
// list a server's resources, or read one.
type ResourcesRequest struct {
	// Op is "list" or "read".
	Op     string `json:"op"`
	Server string `json:"server"`
	// URI is the resource to read.
	URI string `json:"uri,omitempty"`
}

// ResourcesAnswer is the "resources" op's result.
type ResourcesAnswer struct {
	Resources []app.ResourceInfo    `json:"resources,omitempty"`
	Contents  []app.ResourceContent `json:"contents,omitempty"`
}

// resourcesTimeout bounds one request to a server, below the control
// socket's own 10 s deadline so that the caller gets the reason.
const resourcesTimeout = 8 * time.Second

// ResourcesHandler answers the control socket's "resources" op from b (the
// running app's MCP manager; main registers it).
func ResourcesHandler(b app.ResourceBrowser) control.Handler {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var req ResourcesRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("resources: bad request: %w", err)
		}
		ctx, cancel := context.WithTimeout(ctx, resourcesTimeout)
		defer cancel()
		switch req.Op {
		case "list":
			list, err := b.ListResources(ctx, req.Server)
			if err != nil {
				return nil, err
			}
			return ResourcesAnswer{Resources: list}, nil
		case "read":
			contents, err := b.ReadResource(ctx, req.Server, req.URI)
			if err != nil {
				return nil, err
			}
			return ResourcesAnswer{Contents: contents}, nil
		}
		return nil, fmt.Errorf("resources: unknown op %q", req.Op)
	}
}

func (c *command) resources(args []string) error {
	if len(args) == 0 {
		return usagef("%q needs list or read", "resources")
	}
	sub, rest := args[0], args[1:]
	f := newFlags("resources " + sub)
	asJSON := f.Bool("json")
	pos, _, err := f.parse(rest)
	if err != nil {
		return err
	}
	req := ResourcesRequest{Op: sub}
	switch sub {
	case "list":
		if err := exactly("resources list", pos, "SERVER"); err != nil {
			return err
		}
	case "read":
		if err := exactly("resources read", pos, "SERVER", "URI"); err != nil {
			return err
		}
		req.URI = pos[1]
	default:
		return usagef("unknown verb %q for %q", sub, "resources")
	}
	req.Server = pos[0]
	st, err := c.store.Load()
	if err != nil {
		return err
	}
	if _, ok := st.Server(req.Server); !ok {
		return &app.InputError{Msg: fmt.Sprintf("no server %q", req.Server)}
	}
	var ans ResourcesAnswer
	ctx, cancel := context.WithTimeout(c.ctx, resourcesTimeout+2*time.Second)
	defer cancel()
	err = control.Call(ctx, c.store.Dir(), "resources", req, &ans)
	if errors.Is(err, control.ErrNotRunning) {
		return errors.New("resources come from the servers the app runs: start it first (`rootkeeper headless` or the GUI)")
	}
	if err != nil {
		return err
	}
	if sub == "list" {
		if *asJSON {
			if ans.Resources == nil {
				ans.Resources = []app.ResourceInfo{}
			}
			return c.printJSON(ans.Resources)
		}
		for _, r := range ans.Resources {
			c.printf("%s  %s  %s\n", r.URI, orDash(r.Name), orDash(r.MIMEType))
		}
		return nil
	}
	if *asJSON {
		if ans.Contents == nil {
			ans.Contents = []app.ResourceContent{}
		}
		return c.printJSON(ans.Contents) // blobs in base64
	}
	for _, rc := range ans.Contents {
		if rc.IsBlob() {
			c.printf("(binary, %d bytes, %s: %s; use --json for base64)\n", len(rc.Blob), orDash(rc.MIMEType), rc.URI)
			continue
		}
		fmt.Fprint(c.env.Stdout, words.SafeLines(rc.Text))
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
