package e2e

import (
	"net/http"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
)

// LeaseList returns the IDs of every lease.
func (s *Server) LeaseList(tb testing.TB) []int64 {
	tb.Helper()
	var res client.LeaseList
	s.Do(tb, "GET", "/v1/leases", nil).Ok(tb, http.StatusOK, &res)
	var ids []int64
	for _, l := range res.Leases {
		ids = append(ids, l.Id)
	}
	slices.Sort(ids)
	return ids
}
