package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// Config is the JSON file named by -config: the registered clients, the
// users who can sign in, and token lifetimes.
type Config struct {
	Clients []ClientConfig `json:"clients"`
	Users   []UserConfig   `json:"users"`
	// AccessTokenLifetime is a time.ParseDuration string; "5m" when empty.
	AccessTokenLifetime string `json:"access_token_lifetime"`
	// RefreshTokenLifetime is a time.ParseDuration string; "24h" when empty.
	RefreshTokenLifetime string `json:"refresh_token_lifetime"`

	accessLifetime  time.Duration
	refreshLifetime time.Duration
}

// ClientConfig registers one OAuth client.
type ClientConfig struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	// RedirectURIs are matched exactly, except that one on a loopback host
	// without a port (http://127.0.0.1/cb) matches any port (RFC 8252 §7.3).
	RedirectURIs []string `json:"redirect_uris"`
	// GrantTypes the client may use; authorization_code and refresh_token
	// when empty.
	GrantTypes []string `json:"grant_types"`
	// Public clients have no secret and must use PKCE with S256.
	Public bool `json:"public"`
	// Audiences are the resources (RFC 8707 resource, or RFC 8693
	// audience) the client may ask tokens for.
	Audiences []string `json:"audiences"`
	// Scopes the client may ask for (openid and offline_access are always
	// allowed).
	Scopes []string `json:"scopes"`
}

// UserConfig is a user who can sign in on the login page.
type UserConfig struct {
	Subject  string `json:"subject"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// supportedGrants are the grant types a client may be registered with.
var supportedGrants = []oidc.GrantType{
	oidc.GrantTypeCode,
	oidc.GrantTypeRefreshToken,
	oidc.GrantTypeClientCredentials,
	oidc.GrantTypeTokenExchange,
}

// loadConfig reads and checks the configuration at path; an empty path
// gives an empty configuration (no clients, no users).
func loadConfig(path string) (*Config, error) {
	cfg := new(Config)
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// check validates the configuration and fills in defaults.
func (c *Config) check() error {
	var err error
	if c.accessLifetime, err = duration(c.AccessTokenLifetime, 5*time.Minute); err != nil {
		return fmt.Errorf("access_token_lifetime: %w", err)
	}
	if c.refreshLifetime, err = duration(c.RefreshTokenLifetime, 24*time.Hour); err != nil {
		return fmt.Errorf("refresh_token_lifetime: %w", err)
	}
	seen := map[string]bool{}
	for i := range c.Clients {
		cl := &c.Clients[i]
		switch {
		case cl.ID == "":
			return fmt.Errorf("client %d has no id", i)
		case seen[cl.ID]:
			return fmt.Errorf("client %q is registered twice", cl.ID)
		case !cl.Public && cl.Secret == "":
			return fmt.Errorf("client %q is confidential but has no secret", cl.ID)
		case cl.Public && cl.Secret != "":
			return fmt.Errorf("client %q is public but has a secret", cl.ID)
		}
		seen[cl.ID] = true
		if len(cl.GrantTypes) == 0 {
			cl.GrantTypes = []string{string(oidc.GrantTypeCode), string(oidc.GrantTypeRefreshToken)}
		}
		for _, g := range cl.GrantTypes {
			if !slices.Contains(supportedGrants, oidc.GrantType(g)) {
				return fmt.Errorf("client %q: unsupported grant type %q", cl.ID, g)
			}
			if cl.Public && oidc.GrantType(g) == oidc.GrantTypeClientCredentials {
				return fmt.Errorf("client %q: a public client cannot use client_credentials", cl.ID)
			}
		}
	}
	users := map[string]bool{}
	for i, u := range c.Users {
		switch {
		case u.Username == "" || u.Subject == "":
			return fmt.Errorf("user %d needs a username and a subject", i)
		case users[u.Username]:
			return fmt.Errorf("user %q is listed twice", u.Username)
		}
		users[u.Username] = true
	}
	return nil
}

// duration parses s, or returns def when s is empty.
func duration(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, errors.New("must be positive")
	}
	return d, nil
}
