// Package httpapi serves httpkv's HTTP/JSON API (the contract in API.md)
// on a chi router: key-value reads and writes, txns, leases, maintenance,
// and watches as Server-Sent Events or newline-delimited JSON.
//
// It alone knows status codes, wire types, the base64 twins of non-UTF-8
// bytes and SSE framing; the domain packages (mvcc, watch, lease) know
// nothing of HTTP. Domain errors are mapped to statuses in errors.go, and
// every request's keys pass through one authorization point (authz.go).
package httpapi
