package etcd

import (
	"bytes"
	"context"
	"errors"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/httpkv/httpkv/kv"
)

// A range in key order is read from etcd in pieces, each charged to the
// answer's bounds (kv.ReadLimits: its bytes, and the bytes all answers
// being built hold at once) as it arrives: a list refused for its size
// stops at the piece that passes the bound, holding what it charged and
// that piece, never etcd's whole answer (up to --max-response-bytes per
// request, uncounted, before). The pieces are read at one revision, the
// first's, so they make one snapshot.
//
// etcd bounds a read by keys only, so the size of a piece is aimed at
// rangePieceBytes from the sizes of the keys read so far, the first
// asking for firstPieceKeys. A range in another order, or with revision
// filters, is one etcd read: etcd sorts or filters the whole range for
// each read, and the limit bounds the answer (the gRPC receive limit its
// bytes). Such a read reserves what the receive limit lets through
// (wholeReadBytes) against the caller's bound on the answers being built
// at once (kv.ReadLimits.Hold, --max-held-answer-bytes) before it asks:
// without it, 20 descending lists of a 60 MiB range at once held 1.3 GiB,
// each within its own bound.

const (
	// rangePieceBytes is about what one piece of a range returns.
	rangePieceBytes = 1 << 20
	// firstPieceKeys is how many keys the first piece asks for.
	firstPieceKeys = 256
	// pieceOverhead is what a key counts for in a piece beyond its key
	// and value bytes, as kv.KeyOverhead does in an answer.
	pieceOverhead = kv.KeyOverhead
)

// wholeReadBytes is what a range read in one piece may receive: the
// gateway's receive limit for reads, or nothing to reserve without one.
func (b *Backend) wholeReadBytes() int64 {
	if b.opts.MaxResponseBytes <= 0 {
		return 0
	}
	return b.opts.MaxResponseBytes + responseSlack
}

// inPieces reports whether a range with options o is read in pieces.
func inPieces(o *kv.RangeOptions) bool {
	return o.KeyAscending() && !o.CountOnly && o.MinModRevision == 0 && o.MaxModRevision == 0 &&
		o.MinCreateRevision == 0 && o.MaxCreateRevision == 0
}

// rangeInPieces reads r in pieces (see above). A range at the current
// revision whose revision is compacted between two pieces starts over,
// once.
func (b *Backend) rangeInPieces(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error) {
	res, err := b.readPieces(ctx, r)
	var ce *kv.CompactedError
	if r.Options.Revision == 0 && errors.As(err, &ce) {
		res, err = b.readPieces(ctx, r)
	}
	return res, err
}

func (b *Backend) readPieces(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error) {
	o := r.Options
	// want is how many keys the answer takes, 0 for all: the limit, or,
	// without one, one more than a bound of keys, to tell it is passed.
	want, maxKeys := o.Limit, int64(0)
	if want == 0 && o.Limits != nil && o.Limits.MaxKeys > 0 {
		maxKeys = o.Limits.MaxKeys
		want = maxKeys + 1
	}
	// Each piece is in key order without asking etcd to sort (which
	// would read the whole range for each piece).
	po := o
	po.SortTarget, po.SortOrder = kv.SortByKey, kv.SortNone
	var res kv.RangeResult
	var bytesRead int64
	ask := int64(firstPieceKeys)
	from := r.From
	for first := true; ; first = false {
		if want > 0 {
			ask = min(ask, want-int64(len(res.KVs)))
		}
		po.Limit = ask
		page, err := b.readPiece(ctx, r, from, po, first)
		if err != nil {
			return kv.RangeResult{}, err
		}
		if first {
			res.Count, res.Revision = page.Count, page.Header.Revision
			if po.Revision == 0 {
				po.Revision = res.Revision
			}
		}
		part, err := rangeResult(page, po)
		if err != nil {
			return kv.RangeResult{}, err
		}
		res.KVs = append(res.KVs, part.KVs...)
		if maxKeys > 0 && int64(len(res.KVs)) > maxKeys {
			return kv.RangeResult{}, &kv.TooLargeError{MaxKeys: maxKeys}
		}
		if !page.More || int64(len(res.KVs)) == want {
			res.More = page.More
			return res, nil
		}
		for _, p := range page.Kvs {
			bytesRead += int64(len(p.Key)+len(p.Value)) + pieceOverhead
		}
		ask = max(1, rangePieceBytes*int64(len(res.KVs))/max(bytesRead, 1))
		from = append(bytes.Clone(res.KVs[len(res.KVs)-1].Key), 0)
	}
}

// readPiece reads the piece of r from from (nil: r.Key) with o. The
// first piece also counts the whole range, in the same read (one etcd
// txn when it starts past r.Key, so that the count is at its revision).
func (b *Backend) readPiece(ctx context.Context, r kv.RangeRequest, from []byte, o kv.RangeOptions, first bool) (*pb.RangeResponse, error) {
	var page *pb.RangeResponse
	err := b.call(ctx, func(ctx context.Context) error {
		switch {
		case !first || from == nil:
			key := r.Key
			if from != nil {
				key = from
			}
			resp, err := b.reads.Do(ctx, rangeOp(key, r.End, o))
			if err != nil {
				return b.tooLarge(err)
			}
			page = (*pb.RangeResponse)(resp.Get())
		default:
			count := kv.RangeOptions{Revision: o.Revision, CountOnly: true}
			resp, err := b.reads.Txn(ctx).Then(rangeOp(from, r.End, o), rangeOp(r.Key, r.End, count)).Commit()
			if err != nil {
				return b.tooLarge(err)
			}
			page = resp.Responses[0].GetResponseRange()
			page.Header = resp.Header
			page.Count = resp.Responses[1].GetResponseRange().Count
		}
		b.saw(page.Header.Revision)
		return nil
	})
	return page, err
}
