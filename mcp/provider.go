package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"rootkeeper/app"
)

// The model providers are spoken to with plain HTTP: the Anthropic Messages
// API and OpenAI-compatible chat completions (which local servers such as
// Ollama, llama.cpp and vLLM speak too). The API key travels only in a
// request header; it is never logged and never part of an error.

// completion is one call to a model: what the reviewed request asks for.
type completion struct {
	cfg       app.SamplingConfig
	key       string // the API key; empty sends none
	req       app.SamplingRequest
	maxTokens int // already capped
}

// complete sends c to the configured provider and returns its answer, with
// the stop reason in MCP's words (endTurn, maxTokens, stopSequence,
// toolUse).
func complete(ctx context.Context, hc *http.Client, c completion) (app.SamplingResult, error) {
	switch c.cfg.Provider {
	case app.ProviderAnthropic:
		return completeAnthropic(ctx, hc, c)
	case app.ProviderOpenAI:
		return completeOpenAI(ctx, hc, c)
	}
	return app.SamplingResult{}, fmt.Errorf("unknown sampling provider %q", c.cfg.Provider)
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func completeAnthropic(ctx context.Context, hc *http.Client, c completion) (app.SamplingResult, error) {
	body := struct {
		Model       string        `json:"model"`
		MaxTokens   int           `json:"max_tokens"`
		System      string        `json:"system,omitempty"`
		Messages    []chatMessage `json:"messages"`
		Temperature *float64      `json:"temperature,omitempty"`
	}{Model: c.cfg.Model, MaxTokens: c.maxTokens, System: c.req.SystemPrompt, Temperature: c.req.Temperature}
	for _, m := range c.req.Messages {
		body.Messages = append(body.Messages, chatMessage{Role: m.Role, Content: m.Text})
	}
	headers := map[string]string{"anthropic-version": "2023-06-01"}
	if c.key != "" {
		headers["x-api-key"] = c.key
	}
	var resp struct {
		Model   string `json:"model"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
	}
	if err := postJSON(ctx, hc, endpoint(c.cfg.URL, "/v1/messages"), headers, body, &resp); err != nil {
		return app.SamplingResult{}, err
	}
	var text strings.Builder
	for _, part := range resp.Content {
		if part.Type == "text" || part.Type == "" {
			text.WriteString(part.Text)
		}
	}
	if len(resp.Content) == 0 {
		return app.SamplingResult{}, fmt.Errorf("the provider's answer has no content")
	}
	stop := map[string]string{"end_turn": "endTurn", "max_tokens": "maxTokens", "stop_sequence": "stopSequence", "tool_use": "toolUse"}
	return app.SamplingResult{Model: or(resp.Model, c.cfg.Model), Text: text.String(), StopReason: mapped(stop, resp.StopReason)}, nil
}

func completeOpenAI(ctx context.Context, hc *http.Client, c completion) (app.SamplingResult, error) {
	body := struct {
		Model       string        `json:"model"`
		MaxTokens   int           `json:"max_tokens"`
		Messages    []chatMessage `json:"messages"`
		Temperature *float64      `json:"temperature,omitempty"`
	}{Model: c.cfg.Model, MaxTokens: c.maxTokens, Temperature: c.req.Temperature}
	if c.req.SystemPrompt != "" {
		body.Messages = append(body.Messages, chatMessage{Role: "system", Content: c.req.SystemPrompt})
	}
	for _, m := range c.req.Messages {
		body.Messages = append(body.Messages, chatMessage{Role: m.Role, Content: m.Text})
	}
	headers := map[string]string{}
	if c.key != "" {
		headers["Authorization"] = "Bearer " + c.key
	}
	var resp struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := postJSON(ctx, hc, endpoint(c.cfg.URL, "/v1/chat/completions"), headers, body, &resp); err != nil {
		return app.SamplingResult{}, err
	}
	if len(resp.Choices) == 0 {
		return app.SamplingResult{}, fmt.Errorf("the provider's answer has no choices")
	}
	stop := map[string]string{"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse", "function_call": "toolUse"}
	ch := resp.Choices[0]
	return app.SamplingResult{Model: or(resp.Model, c.cfg.Model), Text: ch.Message.Content, StopReason: mapped(stop, ch.FinishReason)}, nil
}

// endpoint joins a base URL and an API path: a base that already ends in
// /v1 is not given a second one.
func endpoint(base, path string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, "/v1") {
		path = strings.TrimPrefix(path, "/v1")
	}
	return base + path
}

// postJSON posts body as JSON and decodes a 2xx answer into out. An error
// names the HTTP status and the provider's own message, never the headers.
func postJSON(ctx context.Context, hc *http.Client, url string, headers map[string]string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("the provider did not answer in time: %w", ctx.Err())
		}
		return fmt.Errorf("cannot reach the provider at %s: %w", url, unwrapURLError(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("reading the provider's answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the provider answered %s: %s", resp.Status, providerMessage(raw))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("the provider's answer is not the expected JSON: %v", err)
	}
	return nil
}

// providerMessage is the error message in a provider's error body
// ({"error": {"message": ...}} for both APIs), or the start of the body.
func providerMessage(raw []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// unwrapURLError drops the "Post URL:" prefix of a *url.Error: the message
// names the URL already.
func unwrapURLError(err error) error {
	type unwrapper interface{ Unwrap() error }
	if u, ok := err.(unwrapper); ok && u.Unwrap() != nil {
		return u.Unwrap()
	}
	return err
}

func mapped(m map[string]string, v string) string {
	if w, ok := m[v]; ok {
		return w
	}
	return v
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
