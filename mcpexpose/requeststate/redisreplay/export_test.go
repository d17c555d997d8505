package redisreplay

// The defaults the black-box tests use.
const (
	DefaultPrefix    = defaultPrefix
	DefaultClockSkew = defaultClockSkew
)
