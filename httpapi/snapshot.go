package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// DefaultSnapshotWriteTimeout bounds each write of a snapshot to its
// client when Config.SnapshotWriteTimeout is zero.
const DefaultSnapshotWriteTimeout = 30 * time.Second

// Errors that end a snapshot's response early; the client sees a body
// shorter than its Content-Length.
var (
	errClientGone   = errors.New("the client went away")
	errShuttingDown = errors.New("the server is shutting down")
)

// snapshot serves GET /v1/snapshot.
//
//	@Summary		Snapshot the store
//	@Description	A consistent point-in-time copy of the whole store: its history down to the compact revision, leases, users, roles and the auth switch. The body is the backend's bbolt file followed by the SHA-256 of those bytes as its last 32 bytes, as etcd's snapshot files are, so a saved file verifies on its own; a body shorter than Content-Length was cut off and is no snapshot.
//	@Description	It is taken from one read transaction and holds up no writer. `httpkv snapshot save` downloads and verifies one, `httpkv snapshot status` describes it, `httpkv snapshot restore` makes a data directory of it.
//	@Tags			maintenance
//	@ID				snapshot
//	@Produce		octet-stream
//	@Success		200	{file}		file		"The snapshot: the bbolt file, then its SHA-256."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		501	{object}	wire.ErrorResponse	"not_supported: a gateway over etcd whose snapshot would hold more than its deployment's records (with --etcd-namespace, or on a cluster holding other keys, or with etcd's own auth on), every other namespace's keys and users included; GET /v1/export copies the namespace's keys."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down or its backend failed."
//	@Header			200	{integer}	X-Revision		"The revision of the state the snapshot holds."
//	@Header			200	{integer}	Content-Length	"The size of the file with its hash."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/snapshot [get]
func (h *Handler) snapshot(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	// Counted as a stream: Close ends it, and waits for it.
	if !h.streams.Start() {
		h.writeError(w, r, kv.ErrClosed)
		return
	}
	defer h.streams.End()
	snap, err := h.cfg.Backend.Snapshot(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	defer snap.Close()
	start := time.Now()
	hd := w.Header()
	hd.Set("Content-Type", "application/octet-stream")
	hd.Set("Content-Length", strconv.FormatInt(snap.Size(), 10))
	hd.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="httpkv-%d.snapshot"`, snap.Revision()))
	setRevision(w, snap.Revision())
	w.WriteHeader(http.StatusOK)

	sw := &snapshotWriter{
		w: w, rc: http.NewResponseController(w), timeout: h.cfg.SnapshotWriteTimeout,
		gone: r.Context().Done(), stop: h.streams.Stop(),
	}
	// The connection may serve further requests: no deadline of this
	// response may linger on it.
	defer sw.rc.SetWriteDeadline(time.Time{})
	n, err := snap.WriteTo(sw)
	if err == nil && n != snap.Size() {
		err = fmt.Errorf("the backend wrote %d bytes of a snapshot of %d", n, snap.Size())
	}
	if err == nil {
		err = sw.flush()
	}
	l := h.log(r).Info().Int64("revision", snap.Revision()).Int64("bytes", n).Dur("duration", time.Since(start))
	if err != nil {
		l.AnErr("cause", err).Msg("snapshot cut short")
		return
	}
	l.Msg("snapshot sent")
}

// snapshotWriter writes a snapshot's response with a deadline on each
// write, so that a client that stops reading is cut off instead of
// holding the snapshot open (and the backend's file growing) forever. It
// stops when the client leaves or the handler closes.
type snapshotWriter struct {
	w       io.Writer
	rc      *http.ResponseController
	timeout time.Duration
	gone    <-chan struct{}
	stop    <-chan struct{}
}

func (sw *snapshotWriter) Write(p []byte) (int, error) {
	if err := sw.ready(); err != nil {
		return 0, err
	}
	return sw.w.Write(p)
}

// flush sends what the response still buffers, under a deadline too.
func (sw *snapshotWriter) flush() error {
	if err := sw.ready(); err != nil {
		return err
	}
	return sw.rc.Flush()
}

// ready checks that the response should go on and sets the deadline of
// the next write.
func (sw *snapshotWriter) ready() error {
	select {
	case <-sw.gone:
		return errClientGone
	case <-sw.stop:
		return errShuttingDown
	default:
	}
	err := sw.rc.SetWriteDeadline(time.Now().Add(sw.timeout))
	if err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}
