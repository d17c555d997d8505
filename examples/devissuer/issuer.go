package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agnara-go/agnara/internal/hostcheck"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// issuerConfig configures an issuer. Every field but RedirectURIs, Key, Now
// and Logger is required. Errors about it name the command-line flags the
// fields come from.
type issuerConfig struct {
	// Issuer is the issuer identifier, an http(s) URL without a trailing
	// slash: the iss claim and the base of every endpoint URL.
	Issuer string
	// ClientID and ClientSecret are the one client's credentials.
	ClientID     string
	ClientSecret string
	// Scopes are the scopes the client may ask for, in order. A
	// client_credentials request without a scope parameter gets all of
	// them. Sign-in accepts and grants "openid" whether or not it is
	// listed.
	Scopes []string
	// Audience is the aud of tokens requested without a resource parameter.
	Audience string
	// TTL is the lifetime of each access token and ID token.
	TTL time.Duration
	// RedirectURIs are exact redirect URIs the authorization endpoint
	// accepts besides loopback http ones, which need no configuration.
	RedirectURIs []string

	// Key signs the tokens. Nil generates a fresh 2048-bit RSA key.
	Key *rsa.PrivateKey
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Logger receives one line per token issued or refused. Nil discards.
	Logger *log.Logger
}

// issuer is an http.Handler serving discovery, the JWKS, the authorization
// endpoint with its sign-in page, and the token endpoint of a
// development-only OAuth 2.1 / OpenID Connect provider that knows one
// confidential client, the authorization_code grant (PKCE required) and the
// client_credentials grant. It is safe for concurrent use.
type issuer struct {
	cfg      issuerConfig
	origin   string // the issuer's origin, as browsers send it in Origin
	kid      string
	signer   jose.Signer // access tokens (typ at+jwt)
	idSigner jose.Signer // ID tokens (typ JWT), the same key
	jwks     []byte      // the public key set, marshalled once
	meta     []byte      // the discovery document, marshalled once
	pending  *store[authRequest]
	codes    *store[grant]
	mux      *http.ServeMux
	handler  http.Handler // mux behind the Host check
}

// Endpoint paths, relative to the issuer URL.
const (
	pathOIDCDiscovery  = "/.well-known/openid-configuration"
	pathOAuthMetadata  = "/.well-known/oauth-authorization-server"
	pathJWKS           = "/jwks"
	pathAuthorize      = "/authorize"
	pathToken          = "/token"
	maxTokenRequestLen = 64 << 10

	// A pending authorization request waits this long for the user to
	// sign in; an authorization code this long to be redeemed. Each store
	// holds at most this many live entries.
	pendingTTL = 10 * time.Minute
	codeTTL    = 60 * time.Second
	maxPending = 1000
	maxCodes   = 1000
)

// claimsSupported are the claims of the ID tokens.
var claimsSupported = []string{"iss", "sub", "aud", "iat", "exp", "auth_time", "nonce", "at_hash", "preferred_username", "scope"}

// metadata is both the OpenID Connect discovery document and the RFC 8414
// authorization server metadata.
type metadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	SubjectTypesSupported             []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ClaimsSupported                   []string `json:"claims_supported"`
}

// tokenResponse is a successful token response (RFC 6749 section 5.1).
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
	IDToken     string `json:"id_token,omitempty"` // authorization_code only
}

// tokenError is an error response (RFC 6749 section 5.2).
type tokenError struct {
	status      int
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// accessClaims are the claims beyond the registered ones (RFC 9068).
type accessClaims struct {
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
}

// newIssuer checks cfg and returns the issuer's handler.
func newIssuer(cfg issuerConfig) (*issuer, error) {
	if err := checkHTTPURL("issuer", cfg.Issuer); err != nil {
		return nil, err
	}
	if strings.HasSuffix(cfg.Issuer, "/") {
		return nil, fmt.Errorf("issuer %q: remove the trailing slash", cfg.Issuer)
	}
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("-client-id and -client-secret must not be empty")
	}
	if len(cfg.Scopes) == 0 {
		return nil, errors.New("-scopes is empty: give at least one scope, such as -scopes users:read")
	}
	for _, s := range cfg.Scopes {
		if !validScopeToken(s) {
			return nil, fmt.Errorf("-scopes: %q is not a valid scope token (RFC 6749 section 3.3: printable ASCII without space, '\"' or '\\')", s)
		}
	}
	if err := checkHTTPURL("-audience", cfg.Audience); err != nil {
		return nil, err
	}
	if cfg.TTL < time.Second {
		return nil, fmt.Errorf("-ttl %v: the token lifetime must be at least 1s, such as 15m", cfg.TTL)
	}
	for _, u := range cfg.RedirectURIs {
		if err := checkRedirectURISyntax("-redirect-uris", u); err != nil {
			return nil, err
		}
	}
	origin, err := originOf(cfg.Issuer)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Key == nil {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, fmt.Errorf("generating the signing key: %w", err)
		}
		cfg.Key = key
	}
	cfg.Scopes = slices.Clone(cfg.Scopes)
	cfg.RedirectURIs = slices.Clone(cfg.RedirectURIs)

	kid := rand.Text()[:12]
	signer, err := jose.NewSigner(
		jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: cfg.Key, KeyID: kid, Algorithm: string(jose.RS256)}},
		(&jose.SignerOptions{}).WithType("at+jwt"), // RFC 9068 access token
	)
	if err != nil {
		return nil, fmt.Errorf("creating the token signer: %w", err)
	}
	// ID tokens get their own typ, so that a resource server checking for
	// at+jwt (RFC 9068 section 4) never takes one for an access token.
	idSigner, err := jose.NewSigner(
		jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: cfg.Key, KeyID: kid, Algorithm: string(jose.RS256)}},
		(&jose.SignerOptions{}).WithType("JWT"),
	)
	if err != nil {
		return nil, fmt.Errorf("creating the ID token signer: %w", err)
	}
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{
		Key:       &cfg.Key.PublicKey,
		KeyID:     kid,
		Algorithm: string(jose.RS256),
		Use:       "sig",
	}}})
	if err != nil {
		return nil, fmt.Errorf("encoding the key set: %w", err)
	}
	scopesSupported := []string{scopeOpenID}
	for _, s := range cfg.Scopes {
		if s != scopeOpenID {
			scopesSupported = append(scopesSupported, s)
		}
	}
	meta, err := json.Marshal(metadata{
		Issuer:                            cfg.Issuer,
		AuthorizationEndpoint:             cfg.Issuer + pathAuthorize,
		JWKSURI:                           cfg.Issuer + pathJWKS,
		TokenEndpoint:                     cfg.Issuer + pathToken,
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		SubjectTypesSupported:             []string{"public"},
		IDTokenSigningAlgValuesSupported:  []string{string(jose.RS256)},
		GrantTypesSupported:               []string{"authorization_code", "client_credentials"},
		TokenEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post"},
		CodeChallengeMethodsSupported:     []string{"S256"},
		ScopesSupported:                   scopesSupported,
		ClaimsSupported:                   claimsSupported,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding the metadata: %w", err)
	}

	is := &issuer{
		cfg: cfg, origin: origin, kid: kid, signer: signer, idSigner: idSigner, jwks: jwks, meta: meta,
		pending: newStore[authRequest](maxPending, pendingTTL, cfg.Now),
		codes:   newStore[grant](maxCodes, codeTTL, cfg.Now),
		mux:     http.NewServeMux(),
	}
	is.mux.HandleFunc("GET "+pathOIDCDiscovery, is.serveJSON(is.meta))
	is.mux.HandleFunc("GET "+pathOAuthMetadata, is.serveJSON(is.meta))
	is.mux.HandleFunc("GET "+pathJWKS, is.serveJSON(is.jwks))
	is.mux.HandleFunc("GET "+pathAuthorize, is.authorize)
	is.mux.Handle("POST "+pathAuthorize, is.crossOriginProtection(http.HandlerFunc(is.signIn)))
	is.mux.HandleFunc("POST "+pathToken, is.token)
	is.mux.HandleFunc(pathToken, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", http.MethodPost)
		writeTokenError(w, &tokenError{status: http.StatusMethodNotAllowed, Code: "invalid_request", Description: "use POST"})
	})
	// It listens on loopback only, so it answers the loopback names only:
	// a page whose name is rebound to 127.0.0.1 gets 421, before a sign-in
	// is kept or a token issued (ADR 30).
	is.handler = hostcheck.Loopback().Handler(is.mux, func(r *http.Request) {
		is.logf("refused: Host %q is not a loopback name", r.Host)
	})
	return is, nil
}

// ServeHTTP implements http.Handler.
func (is *issuer) ServeHTTP(w http.ResponseWriter, r *http.Request) { is.handler.ServeHTTP(w, r) }

func (is *issuer) serveJSON(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}
}

// token serves the token endpoint: the authorization_code and
// client_credentials grants.
func (is *issuer) token(w http.ResponseWriter, r *http.Request) {
	resp, terr := is.issue(w, r)
	if terr != nil {
		is.logf("token refused: %s: %s", terr.Code, terr.Description)
		writeTokenError(w, terr)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	json.NewEncoder(w).Encode(resp)
}

func (is *issuer) issue(w http.ResponseWriter, r *http.Request) (*tokenResponse, *tokenError) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/x-www-form-urlencoded") {
		return nil, badRequest("invalid_request", "the body must be application/x-www-form-urlencoded")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenRequestLen)
	if err := r.ParseForm(); err != nil {
		return nil, badRequest("invalid_request", "the body is not a valid form")
	}
	form := r.PostForm
	for name, values := range form {
		if len(values) > 1 {
			if name == "resource" {
				return nil, badRequest("invalid_target", "this issuer accepts one resource per token request")
			}
			return nil, badRequest("invalid_request", "parameter %q is repeated", name)
		}
	}

	// Client authentication (RFC 6749 section 2.3.1).
	id, secret, basic := r.BasicAuth()
	if basic {
		if form.Has("client_secret") {
			return nil, badRequest("invalid_request", "use one client authentication method: HTTP Basic or client_secret in the body, not both")
		}
		// Both halves are form-encoded before Basic encoding.
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return nil, badRequest("invalid_request", "the Basic credentials are not form-encoded correctly")
		}
		if form.Has("client_id") && form.Get("client_id") != id {
			return nil, badRequest("invalid_request", "client_id in the body differs from the Basic credentials")
		}
	} else {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	if !is.authenticate(id, secret) {
		w.Header().Set("WWW-Authenticate", `Basic realm="devissuer"`)
		return nil, &tokenError{status: http.StatusUnauthorized, Code: "invalid_client", Description: "unknown client or wrong secret"}
	}

	switch gt := form.Get("grant_type"); gt {
	case "client_credentials":
		return is.clientCredentials(id, form)
	case "authorization_code":
		return is.authorizationCode(id, form)
	case "":
		return nil, badRequest("invalid_request", "grant_type is missing")
	default:
		return nil, badRequest("unsupported_grant_type", "grant_type %q is not supported: only authorization_code and client_credentials", gt)
	}
}

// clientCredentials issues a token to the authenticated client id for
// itself.
func (is *issuer) clientCredentials(id string, form url.Values) (*tokenResponse, *tokenError) {
	scopes := is.cfg.Scopes
	if s := form.Get("scope"); s != "" {
		scopes = nil
		for _, sc := range strings.Fields(s) {
			if !slices.Contains(is.cfg.Scopes, sc) {
				return nil, badRequest("invalid_scope", "scope %q is not allowed; allowed: %s", sc, strings.Join(is.cfg.Scopes, " "))
			}
			if !slices.Contains(scopes, sc) {
				scopes = append(scopes, sc)
			}
		}
	}

	audience, terr := resourceParam(form)
	if terr != nil {
		return nil, terr
	}
	if audience == "" {
		audience = is.cfg.Audience
	}

	scope := strings.Join(scopes, " ")
	token, terr := is.accessToken(id, id, audience, scope, is.cfg.Now())
	if terr != nil {
		return nil, terr
	}
	is.logf("token issued: client %q, scope %q, aud %q, expires in %v", id, scope, audience, is.cfg.TTL)
	return &tokenResponse{
		AccessToken: token,
		TokenType:   "Bearer",
		ExpiresIn:   int64(is.cfg.TTL / time.Second),
		Scope:       scope,
	}, nil
}

// resourceParam returns the RFC 8707 resource parameter of a token request,
// "" when there is none.
func resourceParam(form url.Values) (string, *tokenError) {
	if !form.Has("resource") {
		return "", nil
	}
	resource := form.Get("resource")
	if err := checkHTTPURL("resource", resource); err != nil {
		return "", badRequest("invalid_target", "%v", err)
	}
	return resource, nil
}

// accessToken signs an RFC 9068 access token.
func (is *issuer) accessToken(subject, clientID, audience, scope string, now time.Time) (string, *tokenError) {
	token, err := jwt.Signed(is.signer).Claims(jwt.Claims{
		Issuer:    is.cfg.Issuer,
		Subject:   subject,
		Audience:  jwt.Audience{audience},
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(now.Add(is.cfg.TTL)),
		ID:        rand.Text(),
	}).Claims(accessClaims{ClientID: clientID, Scope: scope}).Serialize()
	if err != nil {
		is.logf("signing a token: %v", err)
		return "", &tokenError{status: http.StatusInternalServerError, Code: "server_error", Description: "could not sign the token"}
	}
	return token, nil
}

// authenticate compares the credentials in constant time: both comparisons
// always run, on fixed-length digests, so neither which half was wrong nor
// the secret's length shows in the timing.
func (is *issuer) authenticate(id, secret string) bool {
	gotID, wantID := sha256.Sum256([]byte(id)), sha256.Sum256([]byte(is.cfg.ClientID))
	gotSecret, wantSecret := sha256.Sum256([]byte(secret)), sha256.Sum256([]byte(is.cfg.ClientSecret))
	okID := subtle.ConstantTimeCompare(gotID[:], wantID[:])
	okSecret := subtle.ConstantTimeCompare(gotSecret[:], wantSecret[:])
	return okID&okSecret == 1
}

func (is *issuer) logf(format string, args ...any) {
	if is.cfg.Logger != nil {
		is.cfg.Logger.Printf(format, args...)
	}
}

// badRequest is a 400 token error.
func badRequest(code, format string, args ...any) *tokenError {
	return &tokenError{status: http.StatusBadRequest, Code: code, Description: fmt.Sprintf(format, args...)}
}

func writeTokenError(w http.ResponseWriter, e *tokenError) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	w.WriteHeader(e.status)
	json.NewEncoder(w).Encode(e)
}

// checkHTTPURL reports whether s is an absolute http or https URL with a
// host and no fragment (RFC 8707 section 2).
func checkHTTPURL(what, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q must be an absolute http or https URL, such as http://127.0.0.1:8080/mcp", what, s)
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return fmt.Errorf("%s %q must not have a fragment", what, s)
	}
	return nil
}

// validScopeToken reports whether s is a scope-token (RFC 6749 section
// 3.3): one or more of %x21 / %x23-5B / %x5D-7E.
func validScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
