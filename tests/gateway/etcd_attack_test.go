package gateway

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// Attacks on a gateway to etcd from outside, by a client that pays little
// for what it makes the gateway pay.

// TestEtcdHistoryPageCost: a page of one event of /v1/history, over a
// range whose history holds 80 values of 1 MiB, costs the gateway about
// that event, not the 80 MiB etcd catches a watch up with in one answer:
// before, the gateway received that answer whole for each page (and
// --etcd-max-history-watches pages at once), a cost of the client's
// choosing that no answer bound saw. The next page goes on from it.
func TestEtcdHistoryPageCost(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	s := startGateway(t, c, "/hc/")
	cli := c.Client(t)
	const values, size = 80, 1 << 20
	value := bytes.Repeat([]byte("v"), size)
	var last int64
	for i := range values {
		resp, err := cli.Put(context.Background(), fmt.Sprintf("/hc/kv/big/%02d", i), string(value))
		if err != nil {
			t.Fatal(err)
		}
		last = resp.Header.Revision
	}
	// The gateway's own watch has received the puts before the count.
	s.DoServed(t, "GET", fmt.Sprintf("/v1/kv/big/00?revision=%d", last), nil).Want(t, http.StatusOK)

	var page client.HistoryResponse
	allocated := s.AllocatedBy(t, func() {
		s.DoServed(t, "GET", "/v1/history?key=big/&prefix=true&limit=1", nil).Want(t, http.StatusOK).Decode(t, &page)
	})
	if len(page.Events) != 1 || !page.More || page.NextPageToken == nil {
		t.Fatalf("first page: %d events, more %v, want 1 and more", len(page.Events), page.More)
	}
	t.Logf("a page of one event allocated %.1f MiB on the gateway", allocated/(1<<20))
	const bound = 32 << 20
	if allocated > bound {
		t.Errorf("a page of one event of 1 MiB allocated %.0f MiB on the gateway, want at most %d MiB (etcd's whole catch-up answer is %d MiB)",
			allocated/(1<<20), bound>>20, values*size>>20)
	}

	// The next page goes on with the next event, whole.
	var next client.HistoryResponse
	s.DoServed(t, "GET", "/v1/history?key=big/&prefix=true&limit=1&page_token="+url.QueryEscape(*page.NextPageToken), nil).Want(t, http.StatusOK).Decode(t, &next)
	if len(next.Events) != 1 || e2e.KeyOf(&next.Events[0].Kv) != "big/01" || len(e2e.ValueOf(&next.Events[0].Kv)) != size {
		t.Errorf("second page: %d events, want big/01 of %d bytes", len(next.Events), size)
	}
}
