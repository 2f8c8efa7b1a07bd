package httpapi

import (
	"errors"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/patch"
)

// errorHint is what the API adds to the message of an error it matches,
// for the people who read it: the route or the flag that helps, which
// the domain packages do not know. text is appended as it is written:
// a colon and what to do, or a flag in brackets.
type errorHint struct {
	match func(error) bool
	text  string
}

// errorHints are checked in order, and the first that matches adds its
// text: cases that carry their own advice come before the sentinel they
// are cases of, with no text. docs/errors.md shows the messages whole.
var errorHints = []errorHint{
	{is(errQueryToken), ""},
	{is(auth.ErrUnauthenticated), `: get one with POST /v1/auth/token and send it as "Authorization: Bearer <token>"`},
	{is(auth.ErrNotEnabled), " (POST /v1/auth/enable)"},
	{is(concurrency.ErrLeaseNotFound), ""},
	{is(kv.ErrLeaseNotFound), ": grant a new one with POST /v1/leases"},
	{is(kv.ErrNoSpace), ": compact, defrag, then DELETE /v1/alarms"},
	{is(kv.ErrTooManyOps), " (--max-txn-ops)"},
	{is(patch.ErrTooLarge), " (--max-request-bytes)"},
	{is(kv.ErrBackendTimeout), " (--etcd-request-timeout); retry after Retry-After"},
	{is(kv.ErrHistoryBusy), " (--etcd-max-history-watches): retry later"},
	{is(kv.ErrTooManyLeases), " (--max-leases)"},
	{func(err error) bool {
		var tl *kv.TooLargeError
		return errors.As(err, &tl) && tl.MaxBytes > 0
	}, " (--max-response-bytes)"},
	{is(kv.ErrClusterWide), ", or start the gateways of the deployment that administers the cluster with --etcd-cluster-maintenance"},
	{is(kv.ErrSnapshotUnsupported), ", or copy the keys this server serves with GET /v1/export"},
}

// is matches target and the errors that wrap it or are cases of it.
func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// errorHintOf returns the hint the API adds to err's message, or "".
func errorHintOf(err error) string {
	for _, h := range errorHints {
		if h.match(err) {
			return h.text
		}
	}
	return ""
}
