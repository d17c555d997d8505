package redislimit

// DefaultPrefix is the default of [Options.Prefix], whose keys the
// black-box tests look for.
const DefaultPrefix = defaultPrefix
