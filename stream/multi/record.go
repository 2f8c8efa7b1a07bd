package multi

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// Streams of many watchers shared by the gateways of a deployment.
//
// Over a backend that keeps records where every gateway reads them (a
// Store: backend/etcd), a stream is its record, not a gateway's
// memory: its owner, what it counts against, and each of its watchers
// (range, options, watch ID, start revision and the revision of its
// created message, whether it was deleted). Every change is a
// compare-and-swap of the record, so that watch IDs given by two gateways
// at once never collide. A gateway serving a connection of the stream
// holds an instance of it (a Stream with shared set), made from the
// record, which follows the record (a watcher added through another
// gateway starts on it, one deleted there ends, the stream deleted there
// ends) and keeps it alive: the record is on a lease of the idle
// timeout's TTL that the serving gateway renews, so that a stream nobody
// reads is deleted by the backend once that long has passed since its
// last connection, whatever gateways died meanwhile. The message ids of
// an instance carry where each watcher stands (cursor.go), so
// that any gateway resumes the stream exactly after any message.

// Store keeps the records of the streams of a deployment; the
// etcd backend is one. Records are opaque to it; versions increase with
// every change.
type Store interface {
	// CreateStreamRecord stores a new record, counted against group with
	// its watchers, on a lease of ttl; false if id is taken, or w is
	// conditional and another stream's count changed since.
	CreateStreamRecord(ctx context.Context, id, group string, data []byte, w kv.StreamWatchers, ttl time.Duration) (bool, error)
	// StreamRecord returns a record and its version; nil if there is none.
	StreamRecord(ctx context.Context, id string) (data []byte, version int64, err error)
	// UpdateStreamRecord replaces a record of group still at version,
	// and its count of watchers as w says.
	UpdateStreamRecord(ctx context.Context, id, group string, data []byte, w kv.StreamWatchers, version int64) (newVersion int64, ok bool, err error)
	// DeleteStreamRecord deletes a record still at version (any when
	// 0); false if there was none, or another version.
	DeleteStreamRecord(ctx context.Context, id string, version int64) (bool, error)
	// TouchStreamRecord renews a record's lease; false if it is gone.
	TouchStreamRecord(ctx context.Context, id string) (bool, error)
	// CountStreamRecords counts the records and their watchers, in all
	// and those of group.
	CountStreamRecords(ctx context.Context, group string) (kv.StreamCounts, error)
	// FollowStreamRecord calls fn with each version of a record after
	// version (data nil once deleted) until ctx ends or fn returns false.
	FollowStreamRecord(ctx context.Context, id string, version int64, fn func(data []byte, version int64) bool) error
}

// maxStreamRecordBytes bounds a stream's record: past it, watchers are
// refused (429).
const maxStreamRecordBytes = 1 << 20

// streamDef is a stream's record.
type streamDef struct {
	User   string `json:"user,omitempty"`
	UserID []byte `json:"user_id,omitempty"` // bytes, not text: JSON would mangle them
	AuthOn bool   `json:"auth_on,omitempty"`
	// Limit is what the stream counts against (Registry.perKey).
	Limit string `json:"limit"`
	// Next is the next watch ID.
	Next int64 `json:"next"`
	// Read is set once a connection read the stream: a GET without a
	// cursor is refused from then on.
	Read bool `json:"read,omitempty"`
	// Reader names the instance that last took the stream (sharedStream.name).
	Reader  string     `json:"reader,omitempty"`
	Watches []watchDef `json:"watches"`
}

// watchDef is a watcher of a record, in watch ID order.
type watchDef struct {
	ID       int64  `json:"id"`
	Key      []byte `json:"key"`
	End      []byte `json:"end"`
	PrevKV   bool   `json:"prev_kv,omitempty"`
	NoPut    bool   `json:"no_put,omitempty"`
	NoDelete bool   `json:"no_delete,omitempty"`
	Progress bool   `json:"progress,omitempty"`
	// Start is its first revision, Created the header revision of its
	// created message: fixed when it is added, so that every gateway
	// starts it alike.
	Start   int64 `json:"start"`
	Created int64 `json:"created"`
	// Deleted: canceled through the API; kept, up to as many as there
	// may be live ones, so that a resume sends its final message.
	Deleted bool `json:"deleted,omitempty"`
}

func (d *streamDef) owner() Owner {
	return Owner{User: d.User, ID: string(d.UserID), AuthOn: d.AuthOn}
}

func (wd *watchDef) request() kv.WatchRequest {
	return kv.WatchRequest{Key: wd.Key, End: wd.End, PrevKV: wd.PrevKV, NoPut: wd.NoPut, NoDelete: wd.NoDelete, ProgressNotify: wd.Progress}
}

// live counts the watchers not deleted.
func (d *streamDef) live() int {
	n := 0
	for i := range d.Watches {
		if !d.Watches[i].Deleted {
			n++
		}
	}
	return n
}

// find returns watcher id, or nil.
func (d *streamDef) find(id int64) *watchDef {
	i, ok := slices.BinarySearchFunc(d.Watches, id, func(wd watchDef, id int64) int { return int(wd.ID - id) })
	if !ok {
		return nil
	}
	return &d.Watches[i]
}

// prune forgets the oldest deleted watchers past max of them.
func (d *streamDef) prune(max int) {
	deleted := len(d.Watches) - d.live()
	if deleted <= max {
		return
	}
	drop := deleted - max
	d.Watches = slices.DeleteFunc(d.Watches, func(wd watchDef) bool {
		if wd.Deleted && drop > 0 {
			drop--
			return true
		}
		return false
	})
}

func decodeStreamDef(data []byte) (*streamDef, error) {
	d := &streamDef{}
	if err := json.Unmarshal(data, d); err != nil {
		return nil, err
	}
	slices.SortFunc(d.Watches, func(a, b watchDef) int { return int(a.ID - b.ID) })
	return d, nil
}

// encode returns d's record, or 429 past maxStreamRecordBytes.
func (d *streamDef) encode() ([]byte, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if len(data) > maxStreamRecordBytes {
		return nil, &LimitError{Limit: LimitRecordBytes, Max: maxStreamRecordBytes}
	}
	return data, nil
}
