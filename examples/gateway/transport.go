package main

import "golang.org/x/oauth2"

// oauth2HTTPClient is the context key golang.org/x/oauth2 reads the HTTP
// client for token requests from.
var oauth2HTTPClient = oauth2.HTTPClient
