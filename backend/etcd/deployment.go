package etcd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Deployments share a cluster only side by side: a namespace that
// begins with another's (/b/ and /b/kv/, or /b and /b/) would put one
// deployment's keys among the other's keys and private records, and the
// deployment without a namespace holds the whole key space. So each
// deployment keeps a marker, the key
//
//	N + "deployment"   {"namespace": N}
//
// written when a gateway first opens it, and a gateway refuses to open
// (ErrOverlap) when
//
//   - a proper prefix P of its namespace has a marker (it would lie
//     inside P's deployment; the empty namespace is a prefix of all);
//   - its namespace's area (every key beginning with N) holds keys
//     outside its own sub-prefixes and keys (ownAreas), as another
//     deployment beginning with N does, or keys that are no httpkv's;
//   - it has no marker yet, and its own sub-prefixes hold another's
//     marker (a deployment nested in them, as /b/kv/x/ in /b/).
//
// A new deployment's marker is put by a txn that compares its whole
// area empty, and then the markers of its proper prefixes are read again:
// of two overlapping deployments started at once, the enclosing one
// finds the other's marker in its area, or the enclosed one finds the
// enclosing one's marker after its own was put, and takes it back.
// A deployment made before markers existed (its area holds its own
// sub-prefixes only) gets its marker at its first open; one nested in
// another's keys before that is only found once it has its marker.

// markerName is the marker's key under the namespace.
const markerName = "deployment"

// ErrOverlap: the namespace overlaps another deployment's.
var ErrOverlap = errors.New("the etcd namespace overlaps another deployment")

// marker is a marker's value.
type marker struct {
	Namespace string `json:"namespace"`
}

// ownAreas are the sub-prefixes (ending in "/") and keys of a namespace
// that its deployment writes. Every key the gateway writes under its
// namespace lies in one of them.
var ownAreas = []string{authPrefix, markerName, keysPrefix, leasesPrefix, probeName, revokeClaimsPrefix, streamsPrefix, streamOwnersPrefix}

// markerKey is the key of the marker of the deployment of namespace ns.
func markerKey(ns string) string { return ns + markerName }

// nsName names a namespace for people.
func nsName(ns string) string {
	if ns == "" {
		return `the deployment without a namespace ("")`
	}
	return fmt.Sprintf("the deployment of namespace %q", ns)
}

// keyRange is [key, end) of etcd; an end of "\x00" is every key from
// key on.
type keyRange struct{ key, end string }

// areaOf returns the range of every key beginning with ns.
func areaOf(ns string) keyRange {
	if ns == "" {
		return keyRange{"\x00", "\x00"}
	}
	return keyRange{ns, clientv3.GetPrefixRangeEnd(ns)}
}

// foreignRanges returns the parts of ns's area outside its own areas.
func foreignRanges(ns string) []keyRange {
	own := make([]keyRange, 0, len(ownAreas))
	for _, a := range ownAreas {
		if strings.HasSuffix(a, "/") {
			own = append(own, keyRange{ns + a, clientv3.GetPrefixRangeEnd(ns + a)})
		} else {
			own = append(own, keyRange{ns + a, ns + a + "\x00"})
		}
	}
	slices.SortFunc(own, func(a, b keyRange) int { return strings.Compare(a.key, b.key) })
	area := areaOf(ns)
	var gaps []keyRange
	from := area.key
	for _, r := range own {
		if from < r.key {
			gaps = append(gaps, keyRange{from, r.key})
		}
		from = r.end
	}
	if area.end == "\x00" || from < area.end {
		gaps = append(gaps, keyRange{from, area.end})
	}
	return gaps
}

// checkDeployment makes sure the namespace overlaps no other deployment,
// and puts its marker if it has none yet.
func (b *Backend) checkDeployment(ctx context.Context) error {
	for {
		if err := b.checkEnclosing(ctx); err != nil {
			return err
		}
		own, empty, err := b.readArea(ctx)
		if err != nil {
			return err
		}
		if own {
			return nil
		}
		if !empty {
			// Made before markers existed, or another's keys: only the
			// deployment's own sub-prefixes, and no marker in them.
			if err := b.checkNested(ctx); err != nil {
				return err
			}
		}
		put, err := b.putMarker(ctx, empty)
		if err != nil {
			return err
		}
		if !put {
			continue // written meanwhile: by another gateway of this deployment?
		}
		if err := b.checkEnclosing(ctx); err != nil {
			// Another deployment, enclosing this one, was made at once.
			b.takeMarkerBack(ctx)
			return err
		}
		return nil
	}
}

// checkEnclosing fails with ErrOverlap if a proper prefix of the
// namespace has a marker. A prefix whose marker the gateway may not read
// (etcd's own permissions keep it to its namespace) is no deployment it
// can overlap.
func (b *Backend) checkEnclosing(ctx context.Context) error {
	ns := b.opts.Namespace
	const chunk = 64
	for from := 0; from < len(ns); from += chunk {
		var ops []clientv3.Op
		for i := from; i < min(from+chunk, len(ns)); i++ {
			ops = append(ops, clientv3.OpGet(markerKey(ns[:i])))
		}
		var found string
		var ok bool
		err := b.call(ctx, func(ctx context.Context) error {
			resp, err := b.cli.Txn(ctx).Then(ops...).Commit()
			if err != nil {
				return err
			}
			for _, r := range resp.Responses {
				for _, p := range r.GetResponseRange().GetKvs() {
					if found, ok = parseMarker(p.Key, p.Value); ok {
						return nil
					}
				}
			}
			return nil
		})
		if errors.Is(rpctypes.Error(err), rpctypes.ErrPermissionDenied) {
			continue
		}
		if err != nil {
			return fmt.Errorf("etcd: read the markers of the deployments around %q: %w", ns, err)
		}
		if ok {
			return b.overlap(found, "lies inside")
		}
	}
	return nil
}

// overlap is the error of a namespace that overlaps other's deployment.
func (b *Backend) overlap(other, how string) error {
	return fmt.Errorf("%w: the namespace %q %s %s (its marker is %q): the keys of one would land among the other's keys and private records. Give each deployment on a cluster a namespace that neither begins with another's nor is the beginning of one (README, \"More than one machine\")",
		ErrOverlap, b.opts.Namespace, how, nsName(other), markerKey(other))
}

// parseMarker returns the namespace of the marker at key, if key holds
// one.
func parseMarker(key, value []byte) (string, bool) {
	var m marker
	if !bytes.HasSuffix(key, []byte(markerName)) || json.Unmarshal(value, &m) != nil ||
		string(key) != markerKey(m.Namespace) {
		return "", false
	}
	return m.Namespace, true
}

// readArea reads, at one revision, whether the namespace has its marker,
// whether its area is empty, and fails with ErrOverlap when the area
// holds keys outside the deployment's own areas.
func (b *Backend) readArea(ctx context.Context) (own, empty bool, err error) {
	ns, area, gaps := b.opts.Namespace, areaOf(b.opts.Namespace), foreignRanges(b.opts.Namespace)
	ops := []clientv3.Op{
		clientv3.OpGet(markerKey(ns)),
		clientv3.OpGet(area.key, clientv3.WithRange(area.end), clientv3.WithCountOnly()),
	}
	for _, g := range gaps {
		ops = append(ops, clientv3.OpGet(g.key, clientv3.WithRange(g.end), clientv3.WithKeysOnly(), clientv3.WithLimit(1)))
	}
	var found []byte
	var gap keyRange
	err = b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) > 0 {
			_, own = parseMarker(kvs[0].Key, kvs[0].Value)
		}
		empty = resp.Responses[1].GetResponseRange().GetCount() == 0
		for i, r := range resp.Responses[2:] {
			if kvs := r.GetResponseRange().GetKvs(); len(kvs) > 0 {
				found, gap = kvs[0].Key, gaps[i]
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return false, false, fmt.Errorf("etcd: read the namespace %q: %w", ns, err)
	}
	if found != nil {
		if other, ok, err := b.findMarker(ctx, gap); err != nil {
			return false, false, err
		} else if ok {
			return false, false, b.overlap(other, "covers")
		}
		return false, false, fmt.Errorf("%w: the namespace %q holds %q, which is no key of this deployment's: another deployment's namespace begins with %q, or a client of etcd's own writes there. Give each deployment on a cluster a namespace that neither begins with another's nor is the beginning of one (README, \"More than one machine\")",
			ErrOverlap, ns, found, ns)
	}
	return own, empty, nil
}

// markerScanPages bounds the pages findMarker reads looking for a
// marker to name: a deployment's marker comes before its keys.
const (
	markerScanPages    = 10
	markerScanPageKeys = 1000
)

// findMarker looks for a marker in the first keys of r, and returns its
// namespace.
func (b *Backend) findMarker(ctx context.Context, r keyRange) (string, bool, error) {
	found, ok := "", false
	err := b.scanKeys(ctx, r, markerScanPages, func(key []byte) (bool, error) {
		ns, is, err := b.markerAt(ctx, key)
		found, ok = ns, is
		return is, err
	})
	return found, ok, err
}

// checkNested fails with ErrOverlap if the namespace's own areas hold the
// marker of another deployment, nested in them: it reads every key of the
// area, once, when a deployment made before markers gets its own.
func (b *Backend) checkNested(ctx context.Context) error {
	other, ok, err := b.findMarker(ctx, areaOf(b.opts.Namespace))
	if err != nil || !ok {
		return err
	}
	return b.overlap(other, "covers")
}

// markerAt reads the key if it may be a marker, and returns the
// namespace of the marker it holds.
func (b *Backend) markerAt(ctx context.Context, key []byte) (string, bool, error) {
	if !bytes.HasSuffix(key, []byte(markerName)) || string(key) == markerKey(b.opts.Namespace) {
		return "", false, nil
	}
	var ns string
	var ok bool
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, string(key))
		if err == nil && len(resp.Kvs) > 0 {
			ns, ok = parseMarker(resp.Kvs[0].Key, resp.Kvs[0].Value)
		}
		return err
	})
	return ns, ok, err
}

// scanKeys calls fn with the keys of r in order, read by pages of
// markerScanPageKeys keys (at most pages of them; 0: all), until fn
// returns true.
func (b *Backend) scanKeys(ctx context.Context, r keyRange, pages int, fn func(key []byte) (bool, error)) error {
	from := r.key
	for page := 0; pages == 0 || page < pages; page++ {
		var resp *clientv3.GetResponse
		err := b.call(ctx, func(ctx context.Context) error {
			var err error
			resp, err = b.cli.Get(ctx, from, clientv3.WithRange(r.end), clientv3.WithKeysOnly(), clientv3.WithLimit(markerScanPageKeys))
			return err
		})
		if err != nil {
			return fmt.Errorf("etcd: read the keys of %q: %w", b.opts.Namespace, err)
		}
		for _, p := range resp.Kvs {
			if stop, err := fn(p.Key); stop || err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	return nil
}

// putMarker puts the namespace's marker: if empty, only while its area is
// still empty; else only while it has none. put is false when the area
// changed meanwhile.
func (b *Backend) putMarker(ctx context.Context, empty bool) (put bool, err error) {
	ns := b.opts.Namespace
	value, err := json.Marshal(marker{Namespace: ns})
	if err != nil {
		return false, err
	}
	cmp := clientv3.Compare(clientv3.CreateRevision(markerKey(ns)), "=", 0)
	if empty {
		area := areaOf(ns)
		cmp = clientv3.Compare(clientv3.CreateRevision(area.key), "=", 0).WithRange(area.end)
	}
	err = b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(markerKey(ns), string(value))).Commit()
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		put = resp.Succeeded
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("etcd: write the marker of %q: %w", ns, err)
	}
	return put, nil
}

// takeMarkerBack deletes the marker just put, if the area holds nothing
// else yet.
func (b *Backend) takeMarkerBack(ctx context.Context) {
	ns := b.opts.Namespace
	area := areaOf(ns)
	_ = b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, area.key, clientv3.WithRange(area.end), clientv3.WithCountOnly())
		if err != nil || resp.Count != 1 {
			return err
		}
		_, err = b.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(area.key), "<", resp.Header.Revision+1).WithRange(area.end)).
			Then(clientv3.OpDelete(markerKey(ns))).Commit()
		return err
	})
}
