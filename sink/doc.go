// Package sink is the connection side of a long-lived stream: where the
// stream engine's loop (package stream) writes. It takes an HTTP/1
// connection over and writes the response head by hand, notices a client
// hanging up (one epoll loop for every connection taken over, on Linux),
// and sends in pieces of Piece bytes, each under a write deadline, so
// that a client that takes nothing for that long is let go while one
// that reads a large message slowly keeps it. Set counts the open
// streams and the connections they took over, so that closing the API
// ends them all.
//
// It knows HTTP and connections, and nothing of the store.
package sink
