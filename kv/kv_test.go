package kv

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func put(key string, lease int64) Op {
	return Op{Put: &PutRequest{Key: []byte(key), Value: []byte("v"), Lease: lease}}
}

func del(key, end string) Op {
	r := &DeleteRequest{Key: []byte(key)}
	if end != "" {
		r.End = []byte(end)
	}
	return Op{Delete: r}
}

func TestTxnValidate(t *testing.T) {
	cases := []struct {
		name string
		txn  TxnRequest
		want error // nil: valid
	}{
		{"puts of two keys", TxnRequest{Success: []Op{put("a", 0), put("b", 0)}}, nil},
		{"one key put twice", TxnRequest{Success: []Op{put("a", 0), put("a", 0)}}, ErrDuplicateKey},
		{"a put inside a delete", TxnRequest{Success: []Op{del("a", "c"), put("b", 0)}}, ErrDuplicateKey},
		{"a put inside a from-key delete", TxnRequest{Success: []Op{del("a", "\x00"), put("zz", 0)}}, ErrDuplicateKey},
		{"the branches put one key", TxnRequest{Success: []Op{put("a", 0)}, Failure: []Op{put("a", 0)}}, nil},
		{"a nested txn's branches put one key", TxnRequest{Success: []Op{{Txn: &TxnRequest{Success: []Op{put("a", 0)}, Failure: []Op{put("a", 0)}}}}}, nil},
		{"a nested put and an outer put", TxnRequest{Success: []Op{put("a", 0), {Txn: &TxnRequest{Success: []Op{put("a", 0)}}}}}, ErrDuplicateKey},
		{"too many ops", TxnRequest{Success: []Op{put("a", 0), put("b", 0), put("c", 0), put("d", 0), put("e", 0)}}, ErrTooManyOps},
		{"an empty op", TxnRequest{Success: []Op{{}}}, ErrInvalidArgument},
		{"an empty key", TxnRequest{Success: []Op{put("", 0)}}, ErrInvalidArgument},
		{"an unknown compare target", TxnRequest{Compare: []Compare{{Key: []byte("a"), Target: 9}}}, ErrInvalidArgument},
	}
	for _, tc := range cases {
		err := tc.txn.Validate(4)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: Validate = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestPutLeases(t *testing.T) {
	txn := TxnRequest{
		Success: []Op{put("a", 7), put("b", 0), {Txn: &TxnRequest{Failure: []Op{put("c", 9), put("d", 7)}}}},
		Failure: []Op{put("e", 8)},
	}
	if got := txn.PutLeases(); !slices.Equal(got, []int64{7, 9, 8}) {
		t.Errorf("PutLeases() = %v, want [7 9 8]: every branch, each lease once", got)
	}
	if got := (&TxnRequest{Success: []Op{put("a", 0)}}).PutLeases(); len(got) != 0 {
		t.Errorf("PutLeases() of a txn without leases = %v", got)
	}
}

func TestHistoryRequestDefaults(t *testing.T) {
	q := HistoryRequest{Key: []byte("a")}
	if err := q.Validate(); err != nil || q.Limit != DefaultHistoryLimit || q.MaxBytes != DefaultHistoryMaxBytes || q.MaxScan != DefaultHistoryMaxScan {
		t.Errorf("Validate() = %v with %+v, want the defaults filled in", err, q)
	}
	for _, bad := range []HistoryRequest{{}, {Key: []byte("a"), StartRevision: -1}, {Key: []byte("a"), Limit: -1}} {
		if err := bad.Validate(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalidArgument", bad, err)
		}
	}
}

func TestErrors(t *testing.T) {
	err := fmt.Errorf("reading: %w", &CompactedError{CompactRevision: 5})
	var ce *CompactedError
	if !errors.Is(err, ErrCompacted) || !errors.As(err, &ce) || ce.CompactRevision != 5 {
		t.Errorf("a wrapped *CompactedError: Is(ErrCompacted) %v, As %v", errors.Is(err, ErrCompacted), ce)
	}
	for _, e := range []error{ErrClosed, ErrBackendFailed} {
		if !errors.Is(e, ErrUnavailable) {
			t.Errorf("%v is not ErrUnavailable", e)
		}
	}
	if !errors.Is(&TooLargeError{MaxKeys: 3}, ErrInvalidArgument) {
		t.Error("a *TooLargeError is not ErrInvalidArgument")
	}
	var limits *ReadLimits
	if err := limits.Charge(1 << 30); err != nil {
		t.Errorf("a nil ReadLimits refused a key: %v", err)
	}
	l := &ReadLimits{MaxBytes: 2 * KeyOverhead}
	if err := l.Charge(10); err != nil {
		t.Errorf("Charge within the bound = %v", err)
	}
	if err := l.Charge(KeyOverhead); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Charge past the bound = %v, want ErrTooLarge", err)
	}
}

// TestTxnNestingMessage: a txn nested past the bound says so, naming the
// depth and the bound, not "at most 0 are allowed".
func TestTxnNestingMessage(t *testing.T) {
	txn := TxnRequest{Success: []Op{put("a", 0)}}
	for range 4 {
		inner := txn
		txn = TxnRequest{Success: []Op{{Txn: &inner}}}
	}
	err := txn.Validate(4)
	want := "a txn at nesting level 5 (the outermost is 1) has 1 operations in one list, and 0 are left for it of the bound (4): nested txns share the bound with the txns around them, so txns of one operation each nest at most 4 levels"
	if !errors.Is(err, ErrTooManyOps) || err.Error() != want {
		t.Errorf("Validate of 5 levels of txns, bound 4 = %v, want %q", err, want)
	}
	if err := txn.Success[0].Txn.Validate(4); err != nil {
		t.Errorf("Validate of 4 levels of txns, bound 4 = %v, want nil", err)
	}
}
