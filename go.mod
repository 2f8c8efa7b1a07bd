module github.com/httpkv/httpkv

go 1.26.8

require (
	github.com/google/btree v1.1.3 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
