package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
)

// ObserveResponse is a message of Client.Observe.
type ObserveResponse struct {
	// Type is "leader" (KV is the leader's key and value from Revision
	// on: a new leader, or a new value) or "no_leader" (nobody leads
	// from Revision on).
	Type     string
	Revision int64
	KV       *KeyValue
	// Raw is the message's data as the server sent it.
	Raw json.RawMessage
}

// Observe follows who leads the election called name: GET
// /v1/elections/{name}/observe. It yields the state now, then every
// change, at the revision it happened. It reconnects and resumes as
// Watch does, and ends as Watch does; onRetry, if not nil, hears of
// every lost connection.
func (c *Client) Observe(ctx context.Context, name string, onRetry func(error)) iter.Seq2[*ObserveResponse, error] {
	return func(yield func(*ObserveResponse, error) bool) {
		f := &follower{
			c:       c,
			onRetry: onRetry,
			open: func(context.Context) (request, error) {
				return request{method: http.MethodGet, path: electionPath(name) + "/observe"}, nil
			},
			handle: func(ev sseEvent) (step, error) {
				m, err := decodeMessage(ev)
				if err != nil {
					return stepStop, err
				}
				switch m.Type {
				case "compacted", "canceled":
					return ending(m)
				}
				if !yield(&ObserveResponse{Type: m.Type, Revision: m.Header.Revision, KV: m.KV, Raw: m.Raw}, nil) {
					return stepStop, nil
				}
				return stepNext, nil
			},
		}
		if err := f.run(ctx); err != nil {
			yield(nil, err)
		}
	}
}
