package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// keepAlive pings the server every Options.KeepAlive and reports on
// unresponsive when two pings in a row go unanswered: a server that hangs
// (stops reading, deadlocks) is then restarted with the usual backoff
// rather than left connected and silent. A server without ping (it answers
// "method not found", as on 2026-07-28) is not pinged again.
func (a *adapter) keepAlive(ctx context.Context, cs *sdk.ClientSession, unresponsive chan<- error) {
	interval := a.m.opts.KeepAlive
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	misses := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, min(interval, 10*time.Second))
		err := cs.Ping(pctx, nil)
		cancel()
		var werr *jsonrpc.Error
		switch {
		case err == nil:
			misses = 0
			continue
		case ctx.Err() != nil:
			return
		case errors.As(err, &werr) && werr.Code == CodeMethodNotFound:
			return
		}
		if misses++; misses >= 2 {
			unresponsive <- fmt.Errorf("unresponsive: %d pings in a row went unanswered (%v)", misses, err)
			return
		}
	}
}
