package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/httpkv/httpkv/openapi/client"
)

// WatchPayload is the data of one watch message, read through the
// generated client's union of message kinds (client.WatchMessage): the
// fields of whichever kind its type names, the others left zero.
type WatchPayload struct {
	Type            string
	WatchID         int64 // only on a stream of many watchers
	Header          *client.ResponseHeader
	StartRevision   int64
	CompactRevision int64
	Events          []client.WatchEvent
	Reason          string
}

// DecodeWatchPayload reads the data of a GET /v1/watch message. Strict, it
// also refuses fields the message's kind does not declare.
func DecodeWatchPayload(data []byte, strict bool) (WatchPayload, error) {
	var u client.WatchMessage
	if err := u.UnmarshalJSON(data); err != nil {
		return WatchPayload{}, err
	}
	kind, err := u.Discriminator()
	if err != nil {
		return WatchPayload{}, err
	}
	p := WatchPayload{Type: kind}
	switch kind {
	case "created":
		var v client.WatchCreated
		err = DecodeKind(data, strict, &v)
		p.Header, p.StartRevision = &v.Header, v.StartRevision
	case "events":
		var v client.WatchEvents
		err = DecodeKind(data, strict, &v)
		p.Header, p.Events = &v.Header, v.Events
	case "progress":
		var v client.WatchProgress
		err = DecodeKind(data, strict, &v)
		p.Header = &v.Header
	case "compacted":
		var v client.WatchCompacted
		err = DecodeKind(data, strict, &v)
		p.Header, p.CompactRevision = &v.Header, v.CompactRevision
	case "canceled":
		var v client.WatchCanceled
		err = DecodeKind(data, strict, &v)
		p.Reason = v.Reason
	default:
		err = fmt.Errorf("unknown message type %q", kind)
	}
	return p, err
}

// DecodeStreamPayload reads the data of a message of a stream of many
// watchers (GET /v1/watch/streams/{stream}): each of its kinds is the one
// of GET /v1/watch with the watch_id of WatchAdded besides (the caller
// matches the data against WatchStreamMessage's schema).
func DecodeStreamPayload(data []byte) (WatchPayload, error) {
	p, err := DecodeWatchPayload(data, false)
	if err != nil {
		return p, err
	}
	var id client.WatchAdded
	err = json.Unmarshal(data, &id)
	p.WatchID = id.WatchId
	return p, err
}

// DecodeKind decodes data, one JSON object, into v.
func DecodeKind(data []byte, strict bool, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}
