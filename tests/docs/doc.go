// Package docs tests what a reader follows: the README's commands run as
// written, its links, the error reference, and the OpenAPI document with
// the clients generated from it (Go, TypeScript, other generators).
package docs
