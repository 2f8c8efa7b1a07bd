package etcd

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/httpkv/httpkv/kv"
)

// errorKinds maps etcd's errors to package kv's, checked in order with
// errors.Is: the API then answers a gateway's failure with the code it
// gives the embedded store's.
var errorKinds = []struct {
	etcd error
	kv   error
}{
	{rpctypes.ErrCompacted, kv.ErrCompacted},
	{rpctypes.ErrFutureRev, kv.ErrFutureRevision},
	{rpctypes.ErrLeaseNotFound, kv.ErrLeaseNotFound},
	{rpctypes.ErrLeaseExist, kv.ErrLeaseExists},
	{rpctypes.ErrNoSpace, kv.ErrNoSpace},
	{rpctypes.ErrTooManyOps, kv.ErrTooManyOps},
	{rpctypes.ErrDuplicateKey, kv.ErrDuplicateKey},
	// Put with ignore_value of a key that does not exist.
	{rpctypes.ErrKeyNotFound, kv.ErrKeyNotFound},
	{rpctypes.ErrEmptyKey, kv.ErrInvalidArgument},
	{rpctypes.ErrValueProvided, kv.ErrInvalidArgument},
	{rpctypes.ErrLeaseProvided, kv.ErrInvalidArgument},
	{rpctypes.ErrInvalidSortOption, kv.ErrInvalidArgument},
	{rpctypes.ErrLeaseTTLTooLarge, kv.ErrInvalidArgument},
	{rpctypes.ErrRequestTooLarge, kv.ErrInvalidArgument},
	// etcd sheds load: the client should come back.
	{rpctypes.ErrTooManyRequests, kv.ErrUnavailable},
}

// mapErr returns etcd's err as package kv's error of the same meaning,
// its text kept. Whatever says that the cluster cannot serve now (no
// leader, no quorum, no member reachable, a request timed out) is
// kv.ErrUnavailable, its message saying so: a client retries it. Anything else, the gateway's
// own misconfiguration included (etcd refusing its credentials), is left
// as it is and answers 500.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	// Calls of etcd's raw gRPC clients return gRPC statuses; clientv3's
	// own calls have made them etcd's errors already.
	err = rpctypes.Error(err)
	if errors.Is(err, clientv3.ErrNoAvailableEndpoints) {
		return kv.Errorf(kv.ErrUnavailable, "etcd cannot serve: no endpoint is reachable; retry after Retry-After")
	}
	for _, k := range errorKinds {
		if errors.Is(err, k.etcd) {
			switch k.kv {
			case kv.ErrCompacted:
				return &kv.CompactedError{}
			case kv.ErrUnavailable:
				return unavailable(err)
			}
			return fmt.Errorf("%w: %s", k.kv, rpctypes.ErrorDesc(err))
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return kv.Errorf(kv.ErrUnavailable, "etcd did not answer in time; retry after Retry-After")
	}
	code := status.Code(err)
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code()
	}
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted:
		return unavailable(err)
	}
	return err
}

// unavailable is kv.ErrUnavailable saying what etcd answered: "etcd
// cannot serve: etcdserver: no leader".
func unavailable(err error) error {
	return kv.Errorf(kv.ErrUnavailable, "etcd cannot serve: %s; retry after Retry-After", rpctypes.ErrorDesc(err))
}
