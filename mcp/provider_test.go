package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"rootkeeper/app"
)

// fakeProvider is a local HTTP server that speaks the Anthropic Messages
// API and OpenAI chat completions, records what it was sent, and answers
// with canned text. It stands in for an LLM provider, which cannot run
// here.
type fakeProvider struct {
	*httptest.Server
	reply  string
	status int // 0: 200

	mu   sync.Mutex
	got  []providerCall
	hold chan struct{} // when set, answers wait for it (timeouts)
}

type providerCall struct {
	Path    string
	Header  http.Header
	Body    map[string]any
	RawBody string
}

func newFakeProvider(t *testing.T, reply string) *fakeProvider {
	t.Helper()
	p := &fakeProvider{reply: reply}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	json.Unmarshal(raw, &body)
	p.mu.Lock()
	p.got = append(p.got, providerCall{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, RawBody: string(raw)})
	hold, status := p.hold, p.status
	p.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if status != 0 {
		w.WriteHeader(status)
		io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		return
	}
	model, _ := body["model"].(string)
	switch r.URL.Path {
	case "/v1/messages":
		json.NewEncoder(w).Encode(map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": model + "-20250101",
			"content":     []any{map[string]any{"type": "text", "text": p.reply}},
			"stop_reason": "end_turn",
		})
	case "/v1/chat/completions":
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": p.reply}, "finish_reason": "length"}},
		})
	default:
		http.NotFound(w, r)
	}
}

func (p *fakeProvider) calls() []providerCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providerCall(nil), p.got...)
}

func TestAnthropicProvider(t *testing.T) {
	p := newFakeProvider(t, "Paris.")
	temp := 0.5
	res, err := complete(context.Background(), http.DefaultClient, completion{
		cfg: app.SamplingConfig{Provider: app.ProviderAnthropic, URL: p.URL + "/", Model: "claude-test"},
		key: "sk-ant-secret",
		req: app.SamplingRequest{
			SystemPrompt: "Be brief.",
			Messages:     []app.SamplingMessage{{Role: "user", Text: "Capital of France?"}, {Role: "assistant", Text: "Hm?"}, {Role: "user", Text: "France."}},
			Temperature:  &temp,
		},
		maxTokens: 77,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (app.SamplingResult{Model: "claude-test-20250101", Text: "Paris.", StopReason: "endTurn"}); res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	calls := p.calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	c := calls[0]
	if c.Path != "/v1/messages" || c.Header.Get("x-api-key") != "sk-ant-secret" || c.Header.Get("anthropic-version") != "2023-06-01" ||
		c.Header.Get("Content-Type") != "application/json" || c.Header.Get("Authorization") != "" {
		t.Errorf("path %s, headers %v", c.Path, c.Header)
	}
	want := map[string]any{
		"model": "claude-test", "max_tokens": 77.0, "system": "Be brief.", "temperature": 0.5,
		"messages": []any{
			map[string]any{"role": "user", "content": "Capital of France?"},
			map[string]any{"role": "assistant", "content": "Hm?"},
			map[string]any{"role": "user", "content": "France."},
		},
	}
	if diff := cmp.Diff(want, c.Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestOpenAIProvider(t *testing.T) {
	p := newFakeProvider(t, "Bonjour")
	res, err := complete(context.Background(), http.DefaultClient, completion{
		cfg:       app.SamplingConfig{Provider: app.ProviderOpenAI, URL: p.URL + "/v1", Model: "gpt-test"},
		key:       "sk-secret",
		req:       app.SamplingRequest{SystemPrompt: "French only.", Messages: []app.SamplingMessage{{Role: "user", Text: "Hello"}}},
		maxTokens: 12,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (app.SamplingResult{Model: "gpt-test", Text: "Bonjour", StopReason: "maxTokens"}); res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	c := p.calls()[0]
	if c.Path != "/v1/chat/completions" || c.Header.Get("Authorization") != "Bearer sk-secret" || c.Header.Get("x-api-key") != "" {
		t.Errorf("path %s, headers %v", c.Path, c.Header)
	}
	want := map[string]any{
		"model": "gpt-test", "max_tokens": 12.0,
		"messages": []any{
			map[string]any{"role": "system", "content": "French only."},
			map[string]any{"role": "user", "content": "Hello"},
		},
	}
	if diff := cmp.Diff(want, c.Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

// A provider's refusal is reported with its status and message, and the
// key appears nowhere in the error.
func TestProviderErrorsNameStatusNotKey(t *testing.T) {
	p := newFakeProvider(t, "")
	p.status = http.StatusUnauthorized
	for _, prov := range []string{app.ProviderAnthropic, app.ProviderOpenAI} {
		_, err := complete(context.Background(), http.DefaultClient, completion{
			cfg: app.SamplingConfig{Provider: prov, URL: p.URL, Model: "m"}, key: "sk-very-secret",
			req: app.SamplingRequest{Messages: []app.SamplingMessage{{Role: "user", Text: "x"}}}, maxTokens: 1,
		})
		if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "invalid x-api-key") || strings.Contains(err.Error(), "sk-very-secret") {
			t.Errorf("%s: error %v", prov, err)
		}
	}
	_, err := complete(context.Background(), http.DefaultClient, completion{
		cfg: app.SamplingConfig{Provider: app.ProviderOpenAI, URL: "http://127.0.0.1:1", Model: "m"}, key: "sk-very-secret", maxTokens: 1,
	})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the provider") || strings.Contains(err.Error(), "sk-very-secret") {
		t.Errorf("unreachable provider: %v", err)
	}
}

func TestProviderHonoursTheDeadline(t *testing.T) {
	p := newFakeProvider(t, "late")
	p.hold = make(chan struct{})
	defer close(p.hold)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := complete(ctx, http.DefaultClient, completion{
		cfg: app.SamplingConfig{Provider: app.ProviderAnthropic, URL: p.URL, Model: "m"}, maxTokens: 1,
	})
	if err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("error %v, want a timeout", err)
	}
}
