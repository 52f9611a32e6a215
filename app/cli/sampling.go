package cli

import (
	"fmt"
	"os"

	"rootkeeper/app"
)

// samplingView is what `sampling show --json` prints.
type samplingView struct {
	Configured bool                `json:"configured"`
	Config     *app.SamplingConfig `json:"config,omitempty"`
	// TokenCap is the effective cap (the default when MaxTokens is 0).
	TokenCap int `json:"tokenCap,omitempty"`
	// KeySet says whether the API key variable is set in this environment
	// (the running app's may differ). The key itself is never printed.
	KeySet bool `json:"keySet"`
}

func (c *command) sampling(args []string) error {
	if len(args) == 0 {
		return usagef("%q needs show, set or clear", "sampling")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "show":
		return c.samplingShow(rest)
	case "set":
		return c.samplingSet(rest)
	case "clear":
		f := newFlags("sampling clear")
		pos, _, err := f.parse(rest)
		if err != nil {
			return err
		}
		if err := exactly("sampling clear", pos); err != nil {
			return err
		}
		if _, err := c.update(func(s *app.State) error { return s.SetSampling(nil) }); err != nil {
			return err
		}
		c.printf("sampling cleared: servers' sampling requests are refused\n")
		return nil
	}
	return usagef("unknown verb %q for %q", sub, "sampling")
}

func (c *command) samplingShow(args []string) error {
	f := newFlags("sampling show")
	asJSON := f.Bool("json")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("sampling show", pos); err != nil {
		return err
	}
	st, err := c.store.Load()
	if err != nil {
		return err
	}
	v := samplingView{Config: st.Sampling, Configured: st.Sampling != nil}
	if st.Sampling != nil {
		v.TokenCap = st.Sampling.TokenCap()
		v.KeySet = st.Sampling.APIKeyEnv != "" && os.Getenv(st.Sampling.APIKeyEnv) != ""
	}
	if *asJSON {
		return c.printJSON(v)
	}
	if st.Sampling == nil {
		c.printf("sampling is not configured: servers' requests are refused (set it with `rootkeeper sampling set`)\n")
		return nil
	}
	s := st.Sampling
	c.printf("provider:   %s\nurl:        %s\nmodel:      %s\nmax tokens: %d\n", s.Provider, s.URL, s.Model, v.TokenCap)
	switch {
	case s.APIKeyEnv == "":
		c.printf("api key:    none sent\n")
	case v.KeySet:
		c.printf("api key:    from $%s (set here)\n", s.APIKeyEnv)
	default:
		c.printf("api key:    from $%s (not set in this shell)\n", s.APIKeyEnv)
	}
	c.printf("every request and every answer is reviewed in the window; headless, requests are rejected\n")
	return nil
}

func (c *command) samplingSet(args []string) error {
	f := newFlags("sampling set")
	provider := f.String("provider")
	url := f.String("url")
	model := f.String("model")
	keyEnv := f.String("api-key-env")
	maxTokens := f.Int("max-tokens", 0)
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("sampling set", pos); err != nil {
		return err
	}
	for _, req := range []struct{ name, v string }{{"provider", *provider}, {"url", *url}, {"model", *model}} {
		if req.v == "" {
			return usagef("%q needs --%s", "sampling set", req.name)
		}
	}
	cfg := &app.SamplingConfig{Provider: *provider, URL: *url, Model: *model, APIKeyEnv: *keyEnv, MaxTokens: *maxTokens}
	if _, err := c.update(func(s *app.State) error { return s.SetSampling(cfg) }); err != nil {
		return err
	}
	c.printf("sampling uses %s model %q at %s, at most %d tokens; a person reviews every request\n",
		cfg.Provider, cfg.Model, cfg.URL, cfg.TokenCap())
	if cfg.APIKeyEnv != "" && os.Getenv(cfg.APIKeyEnv) == "" {
		fmt.Fprintf(c.env.Stderr, "rootkeeper: warning: $%s is not set here; the running app needs it in its environment\n", cfg.APIKeyEnv)
	}
	return nil
}
