// Package wire is the API's documents as they travel: the request and
// answer types of every route but the streams (declared once, for the
// handlers and for swag, which names each schema with its @name comment),
// the hand-written appenders of the answers on the hot paths, the strict
// decoders of request bodies and query parameters, and the page tokens.
//
// It knows no HTTP: decoders take bytes and url.Values, appenders append
// to a []byte, and a malformed request is an *Error whose code the API
// answers with the same table as any other. Routes, statuses and headers
// are httpapi's.
package wire

// MaxListLimit is the most keys a list, a history page or a txn range
// returns at once, and the largest limit they take.
const MaxListLimit = 10000
