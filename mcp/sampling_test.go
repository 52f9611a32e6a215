package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// person stands in for the human who reviews sampling requests: it approves
// or rejects, editing the last user message and the answer, and remembers
// what it was shown.
type person struct {
	approveRequest, approveResult bool
	prefix                        string // put before the last user message
	answerSuffix                  string // put after the model's answer

	mu       sync.Mutex
	requests []app.SamplingRequest
	results  []app.SamplingResult
}

func (p *person) ReviewRequest(_ context.Context, req app.SamplingRequest) (app.SamplingRequest, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, req)
	if i := req.LastUser(); i >= 0 {
		req.Messages = append([]app.SamplingMessage(nil), req.Messages...)
		req.Messages[i].Text = p.prefix + req.Messages[i].Text
	}
	return req, p.approveRequest, nil
}

func (p *person) ReviewResult(_ context.Context, _ app.SamplingRequest, res app.SamplingResult) (app.SamplingResult, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.results = append(p.results, res)
	res.Text += p.answerSuffix
	return res, p.approveResult, nil
}

func (p *person) seen() ([]app.SamplingRequest, []app.SamplingResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]app.SamplingRequest(nil), p.requests...), append([]app.SamplingResult(nil), p.results...)
}

// samplingEnv runs server-everything (stdio) with the given sampling mode,
// sampling pointed at a fake provider, and rev as the reviewer.
func samplingEnv(t *testing.T, mode app.SamplingMode, rev app.SamplingReviewer, configure bool) (*testEnv, *fakeProvider) {
	t.Helper()
	bin := apptest.NPMServer(t, "mcp-server-everything")
	prov := newFakeProvider(t, "The capital of France is Paris.")
	e := newEnv(t)
	t.Setenv("ROOTKEEPER_TEST_KEY", "sk-test-secret")
	e.update(func(s *app.State) error {
		if configure {
			if err := s.SetSampling(&app.SamplingConfig{Provider: app.ProviderAnthropic, URL: prov.URL, Model: "claude-test",
				APIKeyEnv: "ROOTKEEPER_TEST_KEY", MaxTokens: 64}); err != nil {
				return err
			}
		}
		return s.AddServer(app.Server{Name: "everything", Type: app.TransportStdio, Command: bin, Args: []string{"stdio"}, Sampling: mode})
	})
	opts := e.fastOptions()
	opts.Reviewer = rev
	e.start(opts)
	e.waitConnected("everything")
	return e, prov
}

func triggerSampling(t *testing.T, e *testEnv, prompt string) (string, error) {
	t.Helper()
	return callText(t, e.m, "everything", "trigger-sampling-request", map[string]any{"prompt": prompt, "maxTokens": 500})
}

func TestSamplingApprovedAndEdited(t *testing.T) {
	p := &person{approveRequest: true, approveResult: true, prefix: "Answer in one line. ", answerSuffix: " (checked)"}
	e, prov := samplingEnv(t, "", p, true)
	text, err := triggerSampling(t, e, "What is the capital of France?")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "The capital of France is Paris. (checked)") || !strings.Contains(text, "claude-test-20250101") ||
		!strings.Contains(text, `"endTurn"`) || !strings.Contains(text, `"assistant"`) {
		t.Errorf("tool result lacks the reviewed answer, model, stop reason or role:\n%s", text)
	}
	reqs, results := p.seen()
	if len(reqs) != 1 || len(results) != 1 {
		t.Fatalf("reviewed %d requests and %d results, want one each", len(reqs), len(results))
	}
	r := reqs[0]
	if r.Server != "everything" || r.SystemPrompt != "You are a helpful test server." || r.MaxTokens != 64 ||
		r.Temperature == nil || *r.Temperature != 0.7 || len(r.Messages) != 1 ||
		r.Messages[0].Role != "user" || !strings.HasSuffix(r.Messages[0].Text, "What is the capital of France?") {
		t.Errorf("the person was shown %+v", r)
	}
	if results[0].Text != "The capital of France is Paris." {
		t.Errorf("the person was shown the answer %+v", results[0])
	}
	calls := prov.calls()
	if len(calls) != 1 {
		t.Fatalf("provider called %d times", len(calls))
	}
	body := calls[0].Body
	msgs, _ := body["messages"].([]any)
	first, _ := msgs[0].(map[string]any)
	if len(msgs) != 1 || first["content"] != "Answer in one line. "+r.Messages[0].Text {
		t.Errorf("provider got messages %v, want the edited prompt", msgs)
	}
	// The server asked for 500 tokens; the cap is 64.
	if body["max_tokens"] != 64.0 || body["model"] != "claude-test" || body["system"] != "You are a helpful test server." {
		t.Errorf("provider got %s", calls[0].RawBody)
	}
	if calls[0].Header.Get("x-api-key") != "sk-test-secret" {
		t.Errorf("provider got key %q", calls[0].Header.Get("x-api-key"))
	}
}

func TestSamplingRejected(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		approveRequest, approveResult bool
		providerCalls                 int
	}{
		{"request", false, true, 0},
		{"answer", true, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &person{approveRequest: tc.approveRequest, approveResult: tc.approveResult}
			e, prov := samplingEnv(t, app.SamplingReview, p, true)
			text, err := triggerSampling(t, e, "secret plans")
			if err == nil && !strings.Contains(text, "MCP error -1: User rejected sampling request") {
				t.Errorf("tool result does not report the rejection:\n%s", text)
			}
			if err != nil && !strings.Contains(err.Error(), "User rejected sampling request") {
				t.Errorf("CallTool: %v, want the rejection", err)
			}
			if strings.Contains(text, "Paris") {
				t.Errorf("the rejected answer reached the server:\n%s", text)
			}
			if n := len(prov.calls()); n != tc.providerCalls {
				t.Errorf("provider called %d times, want %d", n, tc.providerCalls)
			}
		})
	}
}

func TestSamplingWithoutReviewerOrConfig(t *testing.T) {
	t.Run("headless", func(t *testing.T) {
		e, prov := samplingEnv(t, "", nil, true)
		text, err := triggerSampling(t, e, "hello")
		if err != nil || !strings.Contains(text, "no one is there to review it (headless)") {
			t.Errorf("got %q, %v; want the headless rejection", text, err)
		}
		if n := len(prov.calls()); n != 0 {
			t.Errorf("provider called %d times without review", n)
		}
		// A reviewer that arrives later (the GUI) is used from then on.
		p := &person{approveRequest: true, approveResult: true}
		e.m.SetReviewer(p)
		if text, err := triggerSampling(t, e, "hello"); err != nil || !strings.Contains(text, "Paris") {
			t.Errorf("after SetReviewer: %q, %v", text, err)
		}
	})
	t.Run("not configured", func(t *testing.T) {
		p := &person{approveRequest: true, approveResult: true}
		e, _ := samplingEnv(t, "", p, false)
		text, err := triggerSampling(t, e, "hello")
		if err != nil || !strings.Contains(text, "sampling is not configured in Rootkeeper") {
			t.Errorf("got %q, %v; want the not-configured refusal", text, err)
		}
		if reqs, _ := p.seen(); len(reqs) != 0 {
			t.Errorf("the person was asked about a request that could not be sent")
		}
	})
}

// With sampling off the capability is not declared, and server-everything
// does not even offer its sampling tool; roots are declared as before.
func TestSamplingOffDeclaresNoCapability(t *testing.T) {
	p := &person{approveRequest: true, approveResult: true}
	e, prov := samplingEnv(t, app.SamplingOff, p, true)
	text, err := triggerSampling(t, e, "hello")
	if err != nil {
		text = err.Error()
	}
	if !strings.Contains(text, "trigger-sampling-request not found") {
		t.Errorf("trigger-sampling-request with sampling off: %q, want tool not found", text)
	}
	if reqs, _ := p.seen(); len(reqs) != 0 || len(prov.calls()) != 0 {
		t.Errorf("sampling happened with sampling off")
	}
	if _, err := everythingRoots(t, e.m); err != nil {
		t.Errorf("get-roots-list with sampling off: %v", err)
	}
}
