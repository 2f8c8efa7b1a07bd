package kv_test

import (
	"errors"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// TestReadLimitsHold checks that Charge tells Hold of each key with its
// overhead, after MaxBytes has had its say, and ends the range with
// Hold's error.
func TestReadLimitsHold(t *testing.T) {
	full := errors.New("no room")
	var told []int64
	l := &kv.ReadLimits{MaxBytes: 1000, Hold: func(n int64) error {
		told = append(told, n)
		if len(told) == 2 {
			return full
		}
		return nil
	}}
	if err := l.Charge(10); err != nil {
		t.Fatalf("first key: %v", err)
	}
	if err := l.Charge(20); !errors.Is(err, full) {
		t.Fatalf("second key: %v, want Hold's error", err)
	}
	if want := []int64{10 + kv.KeyOverhead, 20 + kv.KeyOverhead}; len(told) != 2 || told[0] != want[0] || told[1] != want[1] {
		t.Fatalf("Hold was told %v, want %v", told, want)
	}
	if err := l.Charge(1000); !errors.Is(err, kv.ErrTooLarge) {
		t.Fatalf("a key past MaxBytes: %v, want ErrTooLarge", err)
	}
	if len(told) != 2 {
		t.Fatalf("Hold was told of a key past MaxBytes: %v", told)
	}
	if err := (*kv.ReadLimits)(nil).Charge(1 << 30); err != nil {
		t.Fatalf("nil limits: %v", err)
	}
}
