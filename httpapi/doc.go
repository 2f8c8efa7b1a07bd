// Package httpapi serves httpkv's HTTP/JSON API (the contract in API.md)
// on a chi router: key-value reads and writes, txns, leases, maintenance,
// and watches as Server-Sent Events or newline-delimited JSON.
//
// It serves a Backend, an interface it declares (backend.go) in package
// kv's terms and composes of small ones: the embedded store
// (backend/embedded) is one, a gateway over an etcd cluster another. It
// imports no storage package: only kv and keyrange (the domain types),
// auth (who may touch which keys), and wire (the documents).
//
// It alone knows status codes, routes, headers and SSE framing; the
// backends know nothing of HTTP, and package wire knows the documents but
// not how they travel. Domain errors, and the wire's refusals, are mapped
// to statuses in errors.go, and every request's keys pass through one
// authorization point (authz.go), where auth's policy decides the key
// ranges a handler collected. Request and response bodies are the types
// of package wire (and, for the watch streams, of openapi_types_*.go),
// which swag documents; the answers of the hot paths are appended by hand
// (wire.Append*), and a test holds those to the declared types.
package httpapi
