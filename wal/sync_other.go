//go:build !linux

package wal

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
