package requeststate

// The defaults and bounds the black-box tests probe.
const (
	DefaultTTL     = defaultTTL
	MaxStateLen    = maxStateLen
	SecretSize     = secretSize
	MaxKeyFileKeys = maxKeyFileKeys
)
