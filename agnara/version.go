package agnara

// Version is agnara-go's own version: `agnara version` prints it, and the
// examples log it when they start. An application's version, which its
// clients see in serverInfo, is Options.Version.
const Version = "0.1.0"
