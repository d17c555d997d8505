package requeststate

// The defaults and bounds the black-box tests probe.
const (
	DefaultTTL     = defaultTTL
	MaxStateLen    = maxStateLen
	SecretSize     = secretSize
	MaxKeyFileKeys = maxKeyFileKeys
)

// FormatKeyFile is the key file text of keys, as WriteKeyFile writes it.
func FormatKeyFile(keys []FileKey) []byte { return formatKeyFile(keys) }
