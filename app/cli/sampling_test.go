package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"rootkeeper/app"
)

func (h *harness) samplingShow() samplingView {
	h.t.Helper()
	var v samplingView
	if err := json.Unmarshal([]byte(h.ok("sampling", "show", "--json")), &v); err != nil {
		h.t.Fatal(err)
	}
	return v
}

func TestSamplingVerbs(t *testing.T) {
	h := newHarness(t)
	if v := h.samplingShow(); v.Configured || v.Config != nil {
		t.Fatalf("fresh state: %+v", v)
	}
	if out := h.ok("sampling", "show"); !strings.Contains(out, "not configured") {
		t.Errorf("show: %q", out)
	}
	t.Setenv("RK_TEST_ANTHROPIC_KEY", "sk-ant-do-not-print")
	out := h.ok("sampling", "set", "--provider", "anthropic", "--url", "https://api.anthropic.com",
		"--model", "claude-sonnet-4-5", "--api-key-env", "RK_TEST_ANTHROPIC_KEY", "--max-tokens", "300")
	if !strings.Contains(out, "claude-sonnet-4-5") || !strings.Contains(out, "300") {
		t.Errorf("set: %q", out)
	}
	v := h.samplingShow()
	want := app.SamplingConfig{Provider: "anthropic", URL: "https://api.anthropic.com", Model: "claude-sonnet-4-5", APIKeyEnv: "RK_TEST_ANTHROPIC_KEY", MaxTokens: 300}
	if !v.Configured || v.Config == nil || *v.Config != want || v.TokenCap != 300 || !v.KeySet {
		t.Errorf("show --json = %+v, want %+v", v, want)
	}
	text := h.ok("sampling", "show")
	if !strings.Contains(text, "$RK_TEST_ANTHROPIC_KEY (set here)") || strings.Contains(text, "sk-ant-do-not-print") {
		t.Errorf("show: %q", text)
	}

	// Setting again replaces the whole configuration; the default cap shows.
	h.ok("sampling", "set", "--provider", "openai", "--url", "http://127.0.0.1:11434", "--model", "llama3")
	v = h.samplingShow()
	if v.Config.Provider != "openai" || v.Config.APIKeyEnv != "" || v.Config.MaxTokens != 0 || v.TokenCap != app.DefaultSamplingMaxTokens || v.KeySet {
		t.Errorf("after the second set: %+v", v)
	}

	h.ok("sampling", "clear")
	if v := h.samplingShow(); v.Configured {
		t.Errorf("after clear: %+v", v)
	}
}

func TestSamplingSetWarnsAboutAnUnsetKey(t *testing.T) {
	h := newHarness(t)
	r := h.run("sampling", "set", "--provider", "openai", "--url", "https://api.openai.com", "--model", "gpt-4o", "--api-key-env", "RK_TEST_SURELY_UNSET")
	if r.code != 0 || !strings.Contains(r.stderr, "RK_TEST_SURELY_UNSET is not set") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestSamplingBadInput(t *testing.T) {
	h := newHarness(t)
	set := func(extra ...string) []string {
		return append([]string{"sampling", "set", "--provider", "anthropic", "--url", "https://api.anthropic.com", "--model", "m"}, extra...)
	}
	h.fails(2, []string{"sampling"}, "show, set or clear")
	h.fails(2, []string{"sampling", "forget"}, `"forget"`)
	h.fails(2, []string{"sampling", "show", "extra"}, `"extra"`)
	h.fails(2, []string{"sampling", "set", "--url", "https://x", "--model", "m"}, "--provider")
	h.fails(2, []string{"sampling", "set", "--provider", "openai", "--model", "m"}, "--url")
	h.fails(2, []string{"sampling", "set", "--provider", "openai", "--url", "https://x"}, "--model")
	h.fails(2, []string{"sampling", "set", "--provider", "gemini", "--url", "https://x", "--model", "m"}, `"gemini"`)
	h.fails(2, []string{"sampling", "set", "--provider", "openai", "--url", "api.openai.com", "--model", "m"}, `"api.openai.com"`)
	h.fails(2, set("--api-key-env", "sk-ant-123"), `"sk-ant-123"`)
	h.fails(2, set("--max-tokens", "-3"), `"-3"`)
	h.fails(2, set("--max-tokens", "lots"), `"lots"`)
	h.fails(2, set("--temperature", "1"), "--temperature")
	h.fails(2, []string{"sampling", "clear", "now"}, `"now"`)
}

func TestServersAddSampling(t *testing.T) {
	h := newHarness(t)
	h.ok("servers", "add", "quiet", "--sampling", "off", "--", "cmd")
	h.ok("servers", "add", "asks", "--sampling", "review", "--url", "https://mcp.example.com/mcp")
	h.ok("servers", "add", "plain", "--", "cmd")
	h.fails(2, []string{"servers", "add", "x", "--sampling", "auto", "--", "cmd"}, `"auto"`, "review or off")
	var servers []app.Server
	if err := json.Unmarshal([]byte(h.ok("servers", "list", "--json")), &servers); err != nil {
		t.Fatal(err)
	}
	got := map[string]app.SamplingMode{}
	for _, s := range servers {
		got[s.Name] = s.Sampling
	}
	if got["quiet"] != app.SamplingOff || got["asks"] != app.SamplingReview || got["plain"] != "" || len(got) != 3 {
		t.Errorf("sampling modes %v", got)
	}
}
