// Package httpapi serves httpkv's HTTP/JSON API (the contract in API.md)
// on a chi router: key-value reads and writes, txns, leases, maintenance,
// and watches as Server-Sent Events or newline-delimited JSON.
//
// It serves a Backend, an interface it declares (backend.go) in package
// kv's terms and composes of small ones: the embedded store
// (backend/embedded) is one, a gateway over an etcd cluster another. It
// imports no storage package: only kv and keyrange (the domain types),
// auth (who may touch which keys), and its own wire types.
//
// It alone knows status codes, wire types, the base64 twins of non-UTF-8
// bytes and SSE framing; the backends know nothing of HTTP. Domain errors
// are mapped to statuses in errors.go, and every request's keys pass
// through one authorization point (authz.go), where auth's policy decides
// the key ranges a handler collected. Request and response bodies are the
// types of openapi_types*.go and txn_request.go, which swag documents;
// wire.go appends the answers of the hot paths by hand, and a test holds
// those to the declared types.
package httpapi
