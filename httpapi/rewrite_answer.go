package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// writeRewrite answers an import or a restore with what it changed.
func writeRewrite(w http.ResponseWriter, res *kv.RewriteResult) {
	keys := map[string]any{}
	for _, l := range []struct {
		name string
		keys [][]byte
	}{{"created", res.CreatedKeys}, {"updated", res.UpdatedKeys}, {"deleted", res.DeletedKeys}} {
		if strs, b64 := keyList(l.keys); b64 != nil {
			keys[l.name+"_base64"] = b64
		} else {
			keys[l.name] = strs
		}
	}
	setRevision(w, res.Revision)
	writeJSON(w, http.StatusOK, map[string]any{
		"header":  wire.ResponseHeader{Revision: res.Revision},
		"created": res.Created, "updated": res.Updated, "deleted": res.Deleted, "unchanged": res.Unchanged,
		"keys": keys,
	})
}
