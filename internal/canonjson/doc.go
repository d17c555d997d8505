// Package canonjson writes JSON values in the canonical form of RFC 8785, the
// JSON Canonicalization Scheme (JCS).
//
// agnara identifies JSON documents by digest, for example the revision of an
// imported MCP tool's catalog entry. Two hosts that received the same document
// (possibly re-encoded along the way with other whitespace, member order,
// escapes or number spellings) must compute the same digest byte for byte, or
// one of them will see a change that did not happen. Hashing the received
// bytes cannot promise that, and neither can encoding/json: it sorts keys
// bytewise, escapes <, > and & as \u003c..., and formats numbers its own way.
// JCS is a published, cross-language definition of the canonical bytes, so a
// digest computed here can be reproduced by any conforming implementation in
// another language (RFC 8785 lists several).
//
// The canonical form (RFC 8785 §3.2):
//
//   - no insignificant whitespace;
//   - object members sorted by name, names compared as arrays of UTF-16 code
//     units (not as UTF-8 bytes: the orders differ for characters above
//     U+FFFF against those in U+E000–U+FFFF);
//   - strings escape only '"', '\' and U+0000–U+001F (with the short forms
//     \b \t \n \f \r, otherwise \u00xx in lower case); every other character,
//     including '<', '>', '&', U+2028 and U+2029, is written as raw UTF-8;
//   - numbers are parsed as IEEE-754 doubles and written the way ECMAScript's
//     Number.prototype.toString writes them: 1e21 is "1e+21", 1e20 is
//     "100000000000000000000", 1.0 is "1", -0 is "0";
//   - literals and array order are kept.
//
// JCS requires its input to be I-JSON (RFC 7493), so input that plain JSON
// tolerates is rejected here instead of being silently "fixed": duplicate
// member names (rather than keeping the last one), invalid UTF-8, escapes of
// unpaired UTF-16 surrogates such as "\ud800", and numbers whose magnitude
// overflows a double (1e400). Numbers too small for a double round to zero, as
// IEEE-754 parsing (and ECMAScript's JSON.parse) does. Nesting is limited to
// [MaxDepth] levels so that hostile input fails with an error instead of
// exhausting the stack.
//
// Errors start with "canonjson: " and name the byte offset in the input and
// the JSON path ($.name[3]) of the offending value.
package canonjson
