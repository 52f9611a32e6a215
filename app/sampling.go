package app

import (
	"context"
	"net/url"
	"strings"
	"unicode"
)

// Sampling (MCP "sampling/createMessage") lets a server ask the client for
// a language-model completion. Rootkeeper answers only with a person in the
// loop: every request is shown for review (and may be edited or rejected)
// before it reaches the model, and the model's answer is shown again
// (editable, rejectable) before it reaches the server.

// Sampling providers.
const (
	ProviderAnthropic = "anthropic" // the Messages API, POST {URL}/v1/messages
	ProviderOpenAI    = "openai"    // OpenAI-compatible chat completions, POST {URL}/v1/chat/completions
)

// DefaultSamplingMaxTokens caps a completion when SamplingConfig.MaxTokens is
// 0.
const DefaultSamplingMaxTokens = 1024

// SamplingConfig says which model answers the servers' sampling requests.
// Nil in State means sampling is not configured: every request is refused.
type SamplingConfig struct {
	// Provider is ProviderAnthropic or ProviderOpenAI.
	Provider string `json:"provider"`
	// URL is the provider's base URL, such as https://api.anthropic.com.
	URL string `json:"url"`
	// Model is the model every request is sent to; the servers' model hints
	// are shown to the reviewer but not followed.
	Model string `json:"model"`
	// APIKeyEnv names the environment variable holding the API key. The key
	// itself is never stored. Empty: no key is sent (a local server).
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// MaxTokens caps every completion, whatever the server asks for; 0 means
	// DefaultSamplingMaxTokens.
	MaxTokens int `json:"maxTokens,omitempty"`
}

// TokenCap is the most tokens any completion may use.
func (c SamplingConfig) TokenCap() int {
	if c.MaxTokens <= 0 {
		return DefaultSamplingMaxTokens
	}
	return c.MaxTokens
}

// CapTokens is the number of tokens to ask the model for when a server
// asks for requested: requested, but no more than the cap (and the cap when
// requested is not positive).
func (c SamplingConfig) CapTokens(requested int) int {
	if requested <= 0 || requested > c.TokenCap() {
		return c.TokenCap()
	}
	return requested
}

// Validate names the first bad value of the configuration.
func (c SamplingConfig) Validate() error {
	switch c.Provider {
	case ProviderAnthropic, ProviderOpenAI:
	default:
		return inputErrorf("invalid sampling provider %q (want anthropic or openai)", c.Provider)
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return inputErrorf("invalid sampling url %q (want http:// or https:// with a host)", c.URL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return inputErrorf("invalid sampling url %q (a base URL has no query or fragment)", c.URL)
	}
	if strings.TrimSpace(c.Model) == "" || strings.TrimSpace(c.Model) != c.Model {
		return inputErrorf("invalid sampling model %q (want a model name)", c.Model)
	}
	if c.APIKeyEnv != "" && !validEnvName(c.APIKeyEnv) {
		return inputErrorf("invalid API key variable %q (want a name such as ANTHROPIC_API_KEY)", c.APIKeyEnv)
	}
	if c.MaxTokens < 0 {
		return inputErrorf("invalid sampling max tokens %d (want 0 or more)", c.MaxTokens)
	}
	return nil
}

// validEnvName accepts the portable environment variable names: letters,
// digits and '_', not starting with a digit.
func validEnvName(s string) bool {
	for i, r := range s {
		if r > unicode.MaxASCII || !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// SetSampling validates and stores the sampling configuration; nil clears
// it (sampling is then refused).
func (s *State) SetSampling(c *SamplingConfig) error {
	if c == nil {
		s.Sampling = nil
		return nil
	}
	if err := c.Validate(); err != nil {
		return err
	}
	cp := *c
	s.Sampling = &cp
	return nil
}

// SamplingMode says whether a server may ask for sampling.
type SamplingMode string

// The sampling modes of a server.
const (
	// SamplingReview declares the sampling capability; a person reviews
	// every request and every answer. The default.
	SamplingReview SamplingMode = "review"
	// SamplingOff does not declare the capability.
	SamplingOff SamplingMode = "off"
)

// SamplingMode returns the server's sampling mode, SamplingReview when
// unset.
func (s Server) SamplingMode() SamplingMode {
	if s.Sampling == "" {
		return SamplingReview
	}
	return s.Sampling
}

// Message roles in sampling.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// SamplingMessage is one message of a sampling request, reduced to text:
// content Rootkeeper does not forward (images, audio, tool calls) reads
// "[image]", "[audio]" and so on.
type SamplingMessage struct {
	Role string `json:"role"` // RoleUser or RoleAssistant
	Text string `json:"text"`
}

// SamplingRequest is what a server asked for, as a person reviews it.
type SamplingRequest struct {
	Server       string            `json:"server"`
	Messages     []SamplingMessage `json:"messages"`
	SystemPrompt string            `json:"systemPrompt,omitempty"`
	// MaxTokens is what the server asked for, already capped.
	MaxTokens int `json:"maxTokens"`
	// ModelHints are the server's model preferences, shown, not followed.
	ModelHints []string `json:"modelHints,omitempty"`
	// IncludeContext is the server's wish for context from MCP servers;
	// Rootkeeper includes none.
	IncludeContext string   `json:"includeContext,omitempty"`
	Temperature    *float64 `json:"temperature,omitempty"`
}

// LastUser is the index of the last user message, -1 if there is none: the
// message a reviewer may edit.
func (r SamplingRequest) LastUser() int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == RoleUser {
			return i
		}
	}
	return -1
}

// SamplingResult is the model's answer, as a person reviews it before it
// goes to the server.
type SamplingResult struct {
	Model      string `json:"model"`
	Text       string `json:"text"`
	StopReason string `json:"stopReason,omitempty"`
}

// SamplingReviewer is the person in the loop (the GUI implements it). Both
// methods are called from the MCP client's goroutines and block until the
// person answers or ctx ends (which counts as a rejection).
type SamplingReviewer interface {
	// ReviewRequest shows a request before it is sent to the model and
	// returns it, possibly edited; false means the person rejected it.
	ReviewRequest(ctx context.Context, req SamplingRequest) (SamplingRequest, bool, error)
	// ReviewResult shows the model's answer before it goes to the server
	// and returns it, possibly edited; false means the person rejected it.
	ReviewResult(ctx context.Context, req SamplingRequest, res SamplingResult) (SamplingResult, bool, error)
}
