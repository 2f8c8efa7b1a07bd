package tests

import (
	"crypto/tls"
	"reflect"
	"testing"
	"time"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/backend/etcd"
	"github.com/httpkv/httpkv/compactor"
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/internal/daemon"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/watch"
)

// TestOptionsAreTunables: the options of every part hold numbers,
// durations, switches, names and the options of the parts below, never
// what a part works with (a lessor, a committer, a writer, a logger, a
// callback): those are arguments of its constructor, so that no option
// is set by a caller only to be replaced by the callee. The one
// exception is a clock (Now), nil but in tests.
func TestOptionsAreTunables(t *testing.T) {
	t.Parallel()
	clock := reflect.TypeOf(func() time.Time { return time.Time{} })
	leaves := map[reflect.Type]bool{reflect.TypeOf(tls.Config{}): true} // TLS settings, a value of crypto/tls
	var check func(path string, typ reflect.Type)
	check = func(path string, typ reflect.Type) {
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice:
			check(path, typ.Elem())
		case reflect.Struct:
			if leaves[typ] {
				return
			}
			for i := range typ.NumField() {
				f := typ.Field(i)
				if f.Type == clock && f.Name == "Now" {
					continue
				}
				check(path+"."+f.Name, f.Type)
			}
		case reflect.Func, reflect.Interface, reflect.Chan, reflect.Map:
			t.Errorf("%s is a %s: what a part works with is an argument of its constructor, not an option", path, typ)
		}
	}
	for _, opts := range []any{
		mvcc.Options{}, watch.Options{}, lease.Config{}, auth.Config{}, compactor.Config{},
		embedded.Options{}, etcd.Options{}, httpapi.Config{}, daemon.Config{},
	} {
		typ := reflect.TypeOf(opts)
		check(typ.String(), typ)
	}
}
