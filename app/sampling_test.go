package app

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestSamplingConfigValidate(t *testing.T) {
	good := SamplingConfig{Provider: ProviderAnthropic, URL: "https://api.anthropic.com", Model: "claude-sonnet-4-5", APIKeyEnv: "ANTHROPIC_API_KEY"}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	local := SamplingConfig{Provider: ProviderOpenAI, URL: "http://127.0.0.1:11434", Model: "llama3", MaxTokens: 200}
	if err := local.Validate(); err != nil {
		t.Fatalf("a local server without a key refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*SamplingConfig)
		want string
	}{
		{"provider", func(c *SamplingConfig) { c.Provider = "gemini" }, `"gemini"`},
		{"empty provider", func(c *SamplingConfig) { c.Provider = "" }, `provider ""`},
		{"scheme", func(c *SamplingConfig) { c.URL = "ftp://x" }, `"ftp://x"`},
		{"no host", func(c *SamplingConfig) { c.URL = "https://" }, `"https://"`},
		{"query", func(c *SamplingConfig) { c.URL = "https://x/?k=1" }, `"https://x/?k=1"`},
		{"model", func(c *SamplingConfig) { c.Model = " " }, `model " "`},
		{"key env", func(c *SamplingConfig) { c.APIKeyEnv = "sk-ant-123" }, `"sk-ant-123"`},
		{"key env digit", func(c *SamplingConfig) { c.APIKeyEnv = "1KEY" }, `"1KEY"`},
		{"max tokens", func(c *SamplingConfig) { c.MaxTokens = -5 }, "-5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			err := c.Validate()
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Validate = %v, want an InputError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q does not name %s on one line", err, tc.want)
			}
		})
	}
}

func TestSamplingTokenCap(t *testing.T) {
	for _, tc := range []struct{ cap, requested, want int }{
		{0, 100, 100},
		{0, 5000, DefaultSamplingMaxTokens},
		{0, 0, DefaultSamplingMaxTokens},
		{200, 100, 100},
		{200, 500, 200},
		{200, -1, 200},
	} {
		if got := (SamplingConfig{MaxTokens: tc.cap}).CapTokens(tc.requested); got != tc.want {
			t.Errorf("cap %d, requested %d: got %d, want %d", tc.cap, tc.requested, got, tc.want)
		}
	}
}

func TestSetSamplingAndClone(t *testing.T) {
	var st State
	bad := &SamplingConfig{Provider: "x"}
	if err := st.SetSampling(bad); err == nil || st.Sampling != nil {
		t.Fatalf("invalid config stored: %v, %+v", err, st.Sampling)
	}
	c := &SamplingConfig{Provider: ProviderOpenAI, URL: "http://localhost:1", Model: "m"}
	if err := st.SetSampling(c); err != nil {
		t.Fatal(err)
	}
	c.Model = "changed by the caller"
	if st.Sampling.Model != "m" {
		t.Errorf("SetSampling kept the caller's pointer")
	}
	cl := st.Clone()
	cl.Sampling.Model = "changed in the clone"
	if st.Sampling.Model != "m" {
		t.Errorf("Clone shares the sampling config")
	}
	if err := st.SetSampling(nil); err != nil || st.Sampling != nil {
		t.Errorf("SetSampling(nil) = %v, left %+v", err, st.Sampling)
	}
}

func TestServerSamplingMode(t *testing.T) {
	srv := Server{Name: "s", Type: TransportStdio, Command: "x"}
	if srv.SamplingMode() != SamplingReview {
		t.Errorf("default mode %q, want review", srv.SamplingMode())
	}
	for _, m := range []SamplingMode{"", SamplingReview, SamplingOff} {
		srv.Sampling = m
		if err := ValidateServer(srv); err != nil {
			t.Errorf("mode %q refused: %v", m, err)
		}
	}
	srv.Sampling = "auto"
	if err := ValidateServer(srv); err == nil || !strings.Contains(err.Error(), `"auto"`) {
		t.Errorf("mode auto: %v, want an error naming it", err)
	}
	// The default is not written to the state file.
	srv.Sampling = ""
	data, _ := json.Marshal(srv)
	if strings.Contains(string(data), "sampling") {
		t.Errorf("default sampling mode written: %s", data)
	}
}

func TestSamplingStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	store, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := SamplingConfig{Provider: ProviderAnthropic, URL: "https://api.anthropic.com", Model: "m", APIKeyEnv: "K", MaxTokens: 300}
	if _, err := store.Update(func(s *State) error { return s.SetSampling(&want) }); err != nil {
		t.Fatal(err)
	}
	st, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if st.Sampling == nil || *st.Sampling != want {
		t.Errorf("loaded %+v, want %+v", st.Sampling, want)
	}
}

func TestLastUser(t *testing.T) {
	r := SamplingRequest{Messages: []SamplingMessage{{RoleUser, "a"}, {RoleAssistant, "b"}, {RoleUser, "c"}, {RoleAssistant, "d"}}}
	if got := r.LastUser(); got != 2 {
		t.Errorf("LastUser = %d, want 2", got)
	}
	if got := (SamplingRequest{}).LastUser(); got != -1 {
		t.Errorf("LastUser of nothing = %d, want -1", got)
	}
}
