package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/mvcc"
)

// compact serves POST /v1/compact.
func (h *Handler) compact(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Revision int64 `json:"revision"`
		Physical bool  `json:"physical"`
	}
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if req.Revision <= 0 {
		writeAPIError(w, badRequest("revision must be a positive revision"))
		return
	}
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	done, err := h.cfg.Store.KV().Compact(req.Revision)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if req.Physical {
		select {
		case err := <-done:
			if err != nil {
				h.writeError(w, r, err)
				return
			}
		case <-r.Context().Done():
			return
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Header header `json:"header"`
	}{h.header(w)})
}

type watcherCounts struct {
	Synced   int `json:"synced"`
	Unsynced int `json:"unsynced"`
	Victims  int `json:"victims"`
}

// status serves GET /v1/status.
func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	st := h.cfg.Store.KV().Stats()
	ws := h.cfg.Store.Stats()
	leases := 0
	if h.cfg.Leases != nil {
		leases = len(h.cfg.Leases.List())
	}
	setRevision(w, st.Revision)
	writeJSON(w, http.StatusOK, struct {
		Header          header        `json:"header"`
		Version         string        `json:"version"`
		Revision        int64         `json:"revision"`
		CompactRevision int64         `json:"compact_revision"`
		DBSize          int64         `json:"db_size"`
		DBSizeInUse     int64         `json:"db_size_in_use"`
		Keys            int64         `json:"keys"`
		Leases          int           `json:"leases"`
		Watchers        watcherCounts `json:"watchers"`
		Alarms          []string      `json:"alarms"`
	}{
		Header: header{Revision: st.Revision}, Version: h.cfg.Version,
		Revision: st.Revision, CompactRevision: st.CompactRevision,
		DBSize: st.DBSize, DBSizeInUse: st.DBSizeInUse, Keys: st.Keys, Leases: leases,
		Watchers: watcherCounts{Synced: ws.Synced, Unsynced: ws.Unsynced, Victims: ws.Victims},
		Alarms:   alarmNames(h.cfg.Store.KV().Alarms()),
	})
}

func alarmNames(as []mvcc.Alarm) []string {
	names := make([]string, 0, len(as))
	for _, a := range as {
		names = append(names, string(a))
	}
	return names
}

// defrag serves POST /v1/defrag.
func (h *Handler) defrag(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	if err := h.cfg.Store.KV().Defrag(); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Header header `json:"header"`
		DBSize int64  `json:"db_size"`
	}{h.header(w), h.cfg.Store.KV().Stats().DBSize})
}

type alarmsResponse struct {
	Header header   `json:"header"`
	Alarms []string `json:"alarms"`
}

// listAlarms serves GET /v1/alarms.
func (h *Handler) listAlarms(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	writeJSON(w, http.StatusOK, alarmsResponse{h.header(w), alarmNames(h.cfg.Store.KV().Alarms())})
}

// disarmAlarms serves DELETE /v1/alarms: it clears NOSPACE. A write that
// still does not fit raises it again.
func (h *Handler) disarmAlarms(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	if err := h.cfg.Store.KV().DisarmNoSpace(); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, alarmsResponse{h.header(w), alarmNames(h.cfg.Store.KV().Alarms())})
}

// health serves GET /health: 503 while shutting down, when the backend has
// failed, or while an alarm is active (as etcd's /health).
func (h *Handler) health(w http.ResponseWriter, r *http.Request) {
	kv := h.cfg.Store.KV()
	reason := ""
	switch {
	case h.shuttingDown.Load():
		reason = "shutting down"
	case kv.Failed() != nil:
		reason = "backend failed"
	case len(kv.Alarms()) > 0:
		reason = "ALARM " + string(kv.Alarms()[0])
	}
	if reason != "" {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"health": false, "reason": reason})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"health": true})
}
