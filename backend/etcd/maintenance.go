package etcd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/httpkv/httpkv/kv"
)

// defragTimeout bounds the defragmentation of one member, which rewrites
// its whole file.
const defragTimeout = 5 * time.Minute

// clusterWide fails with kv.ErrClusterWide unless the gateway may run
// an operation of the whole cluster (Options.ClusterMaintenance): what,
// done through one namespace, every other deployment of the cluster
// undergoes, and where it is done instead.
func (b *Backend) clusterWide(what, instead string) error {
	if b.opts.Namespace == "" || b.opts.ClusterMaintenance {
		return nil
	}
	return kv.Errorf(kv.ErrClusterWide, "%s is the whole etcd cluster's, every deployment's on it, and this gateway serves one namespace (%q): %s", what, b.opts.Namespace, instead)
}

// Defrag defragments every member, one at a time (etcd defragments one
// member per request, and a member defragmenting answers nothing else),
// and returns the largest member's size after. It is the cluster's
// (clusterWide).
func (b *Backend) Defrag(ctx context.Context) (int64, error) {
	if err := b.clusterWide("defragmentation", "the cluster's operator runs etcdctl defrag on each member"); err != nil {
		return 0, err
	}
	for _, ep := range b.opts.Endpoints {
		dctx, cancel := context.WithTimeout(ctx, defragTimeout)
		_, err := b.cli.Defragment(dctx, ep)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return 0, context.Cause(ctx)
			}
			return 0, fmt.Errorf("defragment %s: %w", ep, mapErr(err))
		}
	}
	sizes, err := b.memberSizes(ctx)
	return sizes.DBSize, err
}

// memberSizes asks every member the last probe reached for its size and
// returns the largest: members that do not answer are left out, unless
// none does.
func (b *Backend) memberSizes(ctx context.Context) (kv.Stats, error) {
	var st kv.Stats
	var errs []error
	eps := b.avail.reachableEndpoints()
	for _, ep := range eps {
		err := b.call(ctx, func(ctx context.Context) error {
			resp, err := b.cli.Status(ctx, ep)
			if err != nil {
				return err
			}
			b.saw(resp.Header.Revision)
			st.DBSize = max(st.DBSize, resp.DbSize)
			st.DBSizeInUse = max(st.DBSizeInUse, resp.DbSizeInUse)
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("status of %s: %w", ep, err))
		}
	}
	if len(errs) == len(eps) {
		if len(errs) == 0 {
			_, err := b.avail.serving()
			return kv.Stats{}, err
		}
		return kv.Stats{}, errors.Join(errs...)
	}
	return st, nil
}

// Alarms returns the alarms active on any member.
func (b *Backend) Alarms(ctx context.Context) ([]kv.Alarm, error) {
	members, err := b.alarmMembers(ctx)
	if err != nil {
		return nil, err
	}
	alarms := []kv.Alarm{}
	for _, m := range members {
		if a := kv.Alarm(m.Alarm.String()); !slices.Contains(alarms, a) {
			alarms = append(alarms, a)
		}
	}
	slices.Sort(alarms)
	b.figures.setAlarms(alarms)
	return alarms, nil
}

func (b *Backend) alarmMembers(ctx context.Context) ([]*pb.AlarmMember, error) {
	var members []*pb.AlarmMember
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.AlarmList(ctx)
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		members = resp.Alarms
		return nil
	})
	return members, err
}

// DisarmAlarms disarms NOSPACE on every member that raised it, and
// returns the alarms still active. A write that still does not fit
// raises it again, as in etcd. It is the cluster's (clusterWide).
func (b *Backend) DisarmAlarms(ctx context.Context) ([]kv.Alarm, error) {
	if err := b.clusterWide("disarming etcd's alarms", "the cluster's operator runs etcdctl alarm disarm once space is freed"); err != nil {
		return nil, err
	}
	members, err := b.alarmMembers(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range members {
		if m.Alarm != pb.AlarmType_NOSPACE {
			continue
		}
		err := b.call(ctx, func(ctx context.Context) error {
			_, err := b.cli.AlarmDisarm(ctx, (*clientv3.AlarmMember)(m))
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return b.Alarms(ctx)
}

// Snapshot begins etcd's snapshot of one member: its bbolt file, then the
// file's SHA-256, as etcd streams it (etcdutl snapshot restore reads it).
// Its revision is the member's as read just before: the snapshot holds it
// at least.
//
// A snapshot holds the whole cluster: every namespace's keys, leases and
// auth records (password hashes, the keys that sign tokens), and etcd's
// own users. So a gateway of one namespace refuses it
// (kv.ErrSnapshotUnsupported); only a deployment that has the cluster to itself
// (no --etcd-namespace) takes one, and only while the cluster holds
// nothing but its records (snapshotAllowed).
func (b *Backend) Snapshot(ctx context.Context) (kv.Snapshot, error) {
	if err := b.snapshotAllowed(ctx); err != nil {
		return nil, err
	}
	var errs []error
	for _, ep := range b.opts.Endpoints {
		sn, err := b.memberSnapshot(ctx, ep)
		if err == nil {
			return sn, nil
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		errs = append(errs, fmt.Errorf("snapshot of %s: %w", ep, err))
	}
	return nil, errors.Join(errs...)
}

// snapshotAllowed fails with kv.ErrSnapshotUnsupported unless a snapshot of the
// cluster would hold this deployment's records alone: the gateway has
// no namespace, the cluster holds no key outside the deployment's own
// areas (another deployment's, or a client of etcd's own), and etcd's
// own auth is off (its users' password hashes are in the snapshot).
func (b *Backend) snapshotAllowed(ctx context.Context) error {
	const instead = "let the cluster's operator back the cluster up with etcdctl snapshot save"
	if b.opts.Namespace != "" {
		return kv.Errorf(kv.ErrSnapshotUnsupported, "a snapshot of etcd holds the whole cluster, and this gateway serves one namespace of it (%q): %s", b.opts.Namespace, instead)
	}
	gaps := foreignRanges("")
	ops := make([]clientv3.Op, len(gaps))
	for i, g := range gaps {
		ops[i] = clientv3.OpGet(g.key, clientv3.WithRange(g.end), clientv3.WithKeysOnly(), clientv3.WithLimit(1))
	}
	var found []byte
	var etcdAuth bool
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		for _, r := range resp.Responses {
			if kvs := r.GetResponseRange().GetKvs(); len(kvs) > 0 {
				found = kvs[0].Key
				return nil
			}
		}
		st, err := b.cli.AuthStatus(ctx)
		if err != nil {
			return err
		}
		etcdAuth = st.Enabled
		return nil
	})
	switch {
	case err != nil:
		return err
	case found != nil:
		return kv.Errorf(kv.ErrSnapshotUnsupported, "a snapshot of etcd holds the whole cluster, and the cluster holds %q, which is none of this deployment's keys (another deployment's, or a client of etcd's own): %s", found, instead)
	case etcdAuth:
		return kv.Errorf(kv.ErrSnapshotUnsupported, "a snapshot of etcd holds the whole cluster, and etcd's own auth is on: the snapshot would hold etcd's users and their password hashes: %s", instead)
	}
	return nil
}

// memberSnapshot opens the snapshot stream of the member at ep, through a
// client of that member alone, and reads its first message, which tells
// the size.
func (b *Backend) memberSnapshot(ctx context.Context, ep string) (kv.Snapshot, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{ep}, DialTimeout: b.opts.DialTimeout, TLS: b.opts.TLS,
		Username: b.opts.Username, Password: b.opts.Password, Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, mapErr(err)
	}
	sn := &memberSnapshot{cli: cli}
	sn.ctx, sn.cancel = context.WithCancel(ctx)
	err = b.call(ctx, func(cctx context.Context) error {
		resp, err := cli.Get(cctx, b.probeKey(), clientv3.WithSerializable(), clientv3.WithCountOnly())
		if err != nil {
			return err
		}
		sn.rev = resp.Header.Revision
		return nil
	})
	if err == nil {
		sn.stream, err = pb.NewMaintenanceClient(cli.ActiveConnection()).Snapshot(sn.ctx, &pb.SnapshotRequest{})
	}
	if err == nil {
		sn.first, err = sn.stream.Recv()
	}
	if err != nil {
		sn.Close()
		return nil, mapErr(err)
	}
	sn.size = int64(len(sn.first.Blob)) + int64(sn.first.RemainingBytes) + snapshotHashSize
	return sn, nil
}

// snapshotHashSize is the SHA-256 etcd sends after the file.
const snapshotHashSize = 32

// memberSnapshot is an open snapshot stream of one member.
type memberSnapshot struct {
	cli    *clientv3.Client
	ctx    context.Context
	cancel context.CancelFunc
	stream pb.Maintenance_SnapshotClient
	first  *pb.SnapshotResponse
	rev    int64
	size   int64

	once     sync.Once
	closeErr error
}

func (s *memberSnapshot) Revision() int64 { return s.rev }
func (s *memberSnapshot) Size() int64     { return s.size }

// WriteTo writes the stream to w: exactly Size bytes, or an error.
func (s *memberSnapshot) WriteTo(w io.Writer) (int64, error) {
	var n int64
	resp := s.first
	for {
		m, err := w.Write(resp.Blob)
		n += int64(m)
		if err != nil {
			return n, err
		}
		resp, err = s.stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, mapErr(err)
		}
	}
	if n != s.size {
		return n, kv.Errorf(kv.ErrUnavailable, "etcd's snapshot stream held %d bytes, not the %d it announced", n, s.size)
	}
	return n, nil
}

// Close ends the stream and the member's client. It is safe to call more
// than once.
func (s *memberSnapshot) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.closeErr = s.cli.Close()
		if errors.Is(s.closeErr, context.Canceled) {
			s.closeErr = nil
		}
	})
	return s.closeErr
}
