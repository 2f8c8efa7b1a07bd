package e2e

import (
	"github.com/httpkv/httpkv/openapi/client"
)

// ListKeys returns the keys of a list answer, in order.
func ListKeys(l client.ListResponse) []string {
	return KeysOf(l.Kvs)
}

// KeysOf returns the keys of kvs, in order.
func KeysOf(kvs []client.KeyValue) []string {
	keys := make([]string, len(kvs))
	for i := range kvs {
		keys[i] = KeyOf(&kvs[i])
	}
	return keys
}
