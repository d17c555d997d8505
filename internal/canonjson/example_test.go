package canonjson_test

import (
	"fmt"

	"github.com/agnara-go/agnara/internal/canonjson"
)

// Two hosts holding the same tool definition, encoded differently, compute
// the same canonical bytes and so the same digest.
func Example() {
	a := []byte(`{"name": "users.get_user", "inputSchema": {"type": "object", "maximum": 1E3}}`)
	b := []byte(`{"inputSchema":{"maximum":1000.0,"type":"object"},"name":"users.get_user"}`)

	canonical, err := canonjson.Canonicalize(a)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", canonical)

	da, err := canonjson.Digest(a)
	if err != nil {
		fmt.Println(err)
		return
	}
	db, err := canonjson.Digest(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(da == db)

	_, err = canonjson.Digest([]byte(`{"name": "a", "name": "b"}`))
	fmt.Println(err)
	// Output:
	// {"inputSchema":{"maximum":1000,"type":"object"},"name":"users.get_user"}
	// true
	// canonjson: duplicate member name "name" at offset 14 (path $)
}
