// Package answer bounds what an ordinary answer (one that is not a
// stream) costs the server while a client takes it: a write deadline for
// each Piece of it, so that a client that stops reading is let go and one
// that reads a large answer slowly is not, a read deadline lifted once
// the request's body is in, and a shared bound on the bytes large answers
// hold, counted from the keys they are built from until they are sent.
//
// It knows net/http and nothing of the store or of the API's errors: the
// caller says how a refused answer is written.
package answer
