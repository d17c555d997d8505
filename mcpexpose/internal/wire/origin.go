package wire

import (
	"net/url"
	"strconv"
	"strings"
)

// Origin is an RFC 6454 origin: the scheme and the host in lower case, the
// host without the brackets of an IPv6 address, and the port always
// written, in decimal ("" only for a scheme without a default port).
type Origin struct{ scheme, host, port string }

// ParseOrigin reads s, which must be an origin as browsers serialize it,
// scheme://host[:port] and nothing more; it reports false for anything
// else: "null", a path (even "/"), userinfo, a query or fragment, a port
// that is not a number from 1 to 65535.
func ParseOrigin(s string) (Origin, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Hostname() == "" || !strings.EqualFold(s, u.Scheme+"://"+u.Host) {
		return Origin{}, false
	}
	o := Origin{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}
	if o.port == "" && strings.HasSuffix(u.Host, ":") {
		return Origin{}, false // "http://host:" names no port
	}
	if o.port != "" {
		n, err := strconv.Atoi(o.port)
		if err != nil || n < 1 || n > 65535 {
			return Origin{}, false
		}
		o.port = strconv.Itoa(n)
	}
	switch {
	case o.port == "" && o.scheme == "http":
		o.port = "80"
	case o.port == "" && o.scheme == "https":
		o.port = "443"
	}
	return o, true
}
