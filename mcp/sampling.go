package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
)

// Sampling: a server's sampling/createMessage goes, in this order, through
//
//	configured? ── reviewer present? ── ReviewRequest (edit / reject)
//	  ── provider (capped tokens, SamplingTimeout) ── ReviewResult (edit / reject)
//	  ── CreateMessageResult{role assistant, text, model, stopReason}
//
// and every refusal is a JSON-RPC error:
//
//	-1      "User rejected sampling request"           the person rejected the request or the answer
//	-1      "...: no one is there to review it (headless)"  no reviewer (rootkeeper headless)
//	-32603  "sampling is not configured in Rootkeeper"  no `rootkeeper sampling set` yet, or no API key
//	-32603  "sampling failed: ..."                      the provider failed or timed out
//
// -1 is the code the MCP specification's examples and the TypeScript SDK
// use for a rejection; -32603 (internal error) is for the client's own
// failures. Decisions are logged (server, approved or rejected, model, token
// cap); prompts and answers never are.

// CodeUserRejected is the JSON-RPC code of a sampling request a person
// (or nobody) rejected.
const CodeUserRejected = -1

// ErrSamplingRejected is the answer to a sampling request the person
// rejected.
func ErrSamplingRejected() *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeUserRejected, Message: "User rejected sampling request"}
}

func errSamplingHeadless() *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeUserRejected, Message: "User rejected sampling request: no one is there to review it (headless)"}
}

func errSamplingUnavailable(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeInternalError, Message: msg}
}

// reviewerBox lets an interface value live in an atomic.Pointer.
type reviewerBox struct{ r app.SamplingReviewer }

// SetReviewer sets the person in the loop of sampling (the GUI, once its
// window exists); nil means nobody, and every request is rejected. Safe to
// call at any time from any goroutine; requests already being reviewed keep
// their reviewer.
func (m *Manager) SetReviewer(r app.SamplingReviewer) {
	if r == nil {
		m.reviewer.Store(nil)
		return
	}
	m.reviewer.Store(&reviewerBox{r})
}

func (m *Manager) currentReviewer() app.SamplingReviewer {
	if b := m.reviewer.Load(); b != nil {
		return b.r
	}
	return nil
}

// createMessage is the adapter's CreateMessageHandler.
func (a *adapter) createMessage(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	if req == nil || req.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sampling/createMessage without params"}
	}
	res, err := a.m.sample(ctx, a.cfg.Name, req.Params)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// sample runs one sampling request of server through review, the model and
// review again.
func (m *Manager) sample(ctx context.Context, server string, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	log := m.log.With("server", server)
	cfg := m.core.Snapshot().State.Sampling
	if cfg == nil {
		log.Info("sampling request refused: sampling is not configured")
		return nil, errSamplingUnavailable("sampling is not configured in Rootkeeper (rootkeeper sampling set ...)")
	}
	if err := cfg.Validate(); err != nil {
		log.Warn("sampling request refused: the sampling configuration is invalid", "error", err)
		return nil, errSamplingUnavailable("sampling is not configured in Rootkeeper: " + err.Error())
	}
	key := ""
	if cfg.APIKeyEnv != "" {
		if key = os.Getenv(cfg.APIKeyEnv); key == "" {
			log.Warn("sampling request refused: the API key variable is not set", "variable", cfg.APIKeyEnv)
			return nil, errSamplingUnavailable(fmt.Sprintf("sampling is not configured in Rootkeeper: the API key variable %s is not set", cfg.APIKeyEnv))
		}
	}
	reviewer := m.currentReviewer()
	if reviewer == nil {
		log.Info("sampling request rejected: no one is there to review it")
		return nil, errSamplingHeadless()
	}

	sreq := samplingRequest(server, p, *cfg)
	edited, ok, err := reviewer.ReviewRequest(ctx, sreq)
	if err != nil || !ok || ctx.Err() != nil {
		log.Info("sampling request rejected", "by", "reviewer", "error", err)
		return nil, ErrSamplingRejected()
	}
	edited.Server = server
	maxTokens := cfg.CapTokens(edited.MaxTokens)
	edited.MaxTokens = maxTokens
	log.Info("sampling request approved", "model", cfg.Model, "provider", cfg.Provider, "max_tokens", maxTokens)

	pctx, cancel := context.WithTimeout(ctx, m.opts.SamplingTimeout)
	res, err := complete(pctx, m.http, completion{cfg: *cfg, key: key, req: edited, maxTokens: maxTokens})
	cancel()
	if err != nil {
		log.Warn("sampling failed", "model", cfg.Model, "error", err)
		return nil, errSamplingUnavailable("sampling failed: " + err.Error())
	}

	final, ok, err := reviewer.ReviewResult(ctx, edited, res)
	if err != nil || !ok || ctx.Err() != nil {
		log.Info("sampling answer rejected", "by", "reviewer", "model", res.Model, "error", err)
		return nil, ErrSamplingRejected()
	}
	log.Info("sampling answer sent", "model", or(final.Model, res.Model), "stop_reason", final.StopReason)
	return &sdk.CreateMessageResult{
		Role:       "assistant",
		Content:    &sdk.TextContent{Text: final.Text},
		Model:      or(final.Model, res.Model),
		StopReason: final.StopReason,
	}, nil
}

// samplingRequest turns the SDK's request into the one the person reviews.
func samplingRequest(server string, p *sdk.CreateMessageParams, cfg app.SamplingConfig) app.SamplingRequest {
	r := app.SamplingRequest{
		Server:         server,
		SystemPrompt:   p.SystemPrompt,
		MaxTokens:      cfg.CapTokens(int(min(p.MaxTokens, 1<<30))),
		IncludeContext: p.IncludeContext,
	}
	if p.Temperature != 0 {
		t := p.Temperature
		r.Temperature = &t
	}
	if p.ModelPreferences != nil {
		for _, h := range p.ModelPreferences.Hints {
			if h != nil && h.Name != "" {
				r.ModelHints = append(r.ModelHints, h.Name)
			}
		}
	}
	for _, msg := range p.Messages {
		if msg == nil {
			continue
		}
		role := string(msg.Role)
		if role != app.RoleAssistant {
			role = app.RoleUser
		}
		r.Messages = append(r.Messages, app.SamplingMessage{Role: role, Text: contentText(msg.Content)})
	}
	return r
}

// contentText is a message's text, or a placeholder for content Rootkeeper
// does not forward.
func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return "[image]"
	case *sdk.AudioContent:
		return "[audio]"
	case nil:
		return ""
	}
	// Tool use and tool results, and whatever comes next: name the type.
	data, _ := json.Marshal(c)
	var head struct {
		Type string `json:"type"`
	}
	json.Unmarshal(data, &head)
	if head.Type == "" {
		head.Type = "content"
	}
	return "[" + head.Type + "]"
}

// samplingDefaults fills the sampling options.
func (o *Options) samplingDefaults() {
	if o.SamplingTimeout <= 0 {
		o.SamplingTimeout = 2 * time.Minute
	}
}
