package etcd

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/httpkv/httpkv/kv"
)

// The history a request reads (a page of /v1/history, a compaction's
// probe) is read by a watch that asks etcd for fragments.
//
// etcd catches a watch from a past revision up by sending it up to 1,000
// revisions of its events in one answer, whatever their size: a range of
// values of 1 MiB makes that answer a gigabyte. clientv3's watch receives
// an answer whole, and joins fragments back into one before handing it
// over, so a page of one event cost the gateway the whole batch, and
// --etcd-max-history-watches pages at once that many batches: a cost
// of the client's choosing that no answer bound saw. A watch of etcd's
// gRPC API with fragment set gets that batch cut into answers of at most
// etcd's --max-request-bytes (an event at least), read one at a time and
// let go of as the page takes them; once the page is full the watch ends,
// and its gRPC stream with it. What a page holds of etcd's answers is then
// one fragment, plus what gRPC's flow control lets etcd send ahead.

// replayOptions are the filters of a replay.
type replayOptions struct {
	prevKV, noPut, noDelete bool
}

// replayFragments is replay for the history a request reads: the events
// of [prefix+key, prefix+end) (end as in clientv3's namespace: "\x00"
// for every key from key, "" for key alone) at revisions from to to, in
// order, their keys without prefix, read in fragments as above, until fn
// returns false. Its errors are replay's.
func (b *Backend) replayFragments(ctx context.Context, prefix, key, end string, from, to int64,
	o replayOptions, fn func(*clientv3.Event) bool) error {
	if to < from {
		return nil
	}
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	stream, err := pb.NewWatchClient(b.cli.ActiveConnection()).Watch(ctx)
	if err != nil {
		return replayStreamErr(ctx, err)
	}
	pk, pe := prefixRange(prefix, []byte(key), []byte(end))
	create := &pb.WatchCreateRequest{Key: pk, RangeEnd: pe, StartRevision: from, PrevKv: o.prevKV, Fragment: true}
	if o.noPut {
		create.Filters = append(create.Filters, pb.WatchCreateRequest_NOPUT)
	}
	if o.noDelete {
		create.Filters = append(create.Filters, pb.WatchCreateRequest_NODELETE)
	}
	if err := stream.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: create}}); err != nil {
		return replayStreamErr(ctx, err)
	}

	// One goroutine receives, one answer at a time; it ends with the
	// stream, which the cancel above ends, and is waited for.
	type received struct {
		resp *pb.WatchResponse
		err  error
	}
	recvc := make(chan received)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			resp, err := stream.Recv()
			select {
			case recvc <- received{resp, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer wg.Wait()
	defer cancel()

	progress := func() {
		_ = stream.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_ProgressRequest{ProgressRequest: &pb.WatchProgressRequest{}}})
	}
	retry := time.NewTicker(progressRetry)
	defer retry.Stop()
	for {
		select {
		case r := <-recvc:
			if r.err != nil {
				return replayStreamErr(ctx, r.err)
			}
			resp := r.resp
			if resp.Header != nil {
				b.saw(resp.Header.Revision)
			}
			switch {
			case resp.CompactRevision != 0:
				b.learnCompact(resp.CompactRevision)
				return &kv.CompactedError{CompactRevision: resp.CompactRevision}
			case resp.Canceled:
				if resp.CancelReason != "" {
					return mapErr(status.Error(codes.FailedPrecondition, resp.CancelReason))
				}
				return mapErr(rpctypes.ErrFutureRev)
			case resp.Created:
				progress()
				continue
			case len(resp.Events) == 0 && !resp.Fragment:
				// A progress notification: everything up to its
				// revision was sent.
				if resp.Header != nil && resp.Header.Revision >= to {
					return nil
				}
				continue
			}
			for _, ev := range resp.Events {
				if ev.Kv.ModRevision > to {
					return nil
				}
				ev.Kv.Key = ev.Kv.Key[len(prefix):]
				if ev.PrevKv != nil {
					ev.PrevKv.Key = ev.PrevKv.Key[len(prefix):]
				}
				if !fn((*clientv3.Event)(ev)) {
					return nil
				}
			}
			// etcd never splits a revision between two answers, but
			// its fragments may.
			if n := len(resp.Events); n > 0 && !resp.Fragment && resp.Events[n-1].Kv.ModRevision == to {
				return nil
			}
		case <-retry.C:
			progress()
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// replayStreamErr is why a replay's gRPC stream failed.
func replayStreamErr(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(err, io.EOF):
		return kv.Errorf(kv.ErrUnavailable, "etcd ended the watch; retry after Retry-After")
	}
	return mapErr(err)
}

// prefixRange is the range [key, end) of clientv3's namespace package
// under prefix: end "\x00" (every key from key) ends where the prefix
// does, and an empty end stays empty (key alone).
func prefixRange(prefix string, key, end []byte) ([]byte, []byte) {
	pk := append([]byte(prefix), key...)
	switch {
	case len(end) == 1 && end[0] == 0:
		if prefix == "" {
			return pk, []byte{0}
		}
		return pk, []byte(clientv3.GetPrefixRangeEnd(prefix))
	case len(end) > 0:
		return pk, append([]byte(prefix), end...)
	}
	return pk, nil
}
