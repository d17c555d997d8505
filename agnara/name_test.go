package agnara

import "testing"

func TestSnakeCase(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a", "a"},
		{"A", "a"},
		{"ID", "id"},
		{"Get", "get"},
		{"get", "get"},
		{"GetUser", "get_user"},
		{"getUser", "get_user"},
		{"GetUserByID", "get_user_by_id"},
		{"HTTPServer", "http_server"},
		{"getHTTP", "get_http"},
		{"GetHTTPResponse", "get_http_response"},
		{"JSONToXML", "json_to_xml"},
		{"ListV2Items", "list_v2_items"},
		{"V2", "v2"},
		{"HTTP2Server", "http2_server"},
		{"Sha256Sum", "sha256_sum"},
		{"already_snake", "already_snake"},
		{"Already_Snake", "already_snake"},
		{"UserID", "user_id"},
		{"GetUserIDs", "get_user_ids"},
		{"ListURLs", "list_urls"},
		{"APIsEnabled", "apis_enabled"},
		{"IsAdmin", "is_admin"},
		{"ÜberCool", "über_cool"},
	}
	for _, tt := range tests {
		if got := snakeCase(tt.in); got != tt.want {
			t.Errorf("snakeCase(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
