package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestParseFile takes the one FILE wherever the flags are.
func TestParseFile(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		file    string
		dir     string
		wantErr bool
	}{
		{"flags first", []string{"--data-dir", "d", "f"}, "f", "d", false},
		{"flags after", []string{"f", "--data-dir", "d"}, "f", "d", false},
		{"flag with =", []string{"f", "--data-dir=d"}, "f", "d", false},
		{"no file", []string{"--data-dir", "d"}, "", "d", true},
		{"two files", []string{"f", "g", "--data-dir", "d"}, "", "d", true},
		{"unknown flag", []string{"f", "--nope"}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newSnapshotFlags("test", "test", io.Discard)
			dir := fs.String("data-dir", "", "")
			file, err := parseFile(fs, tt.args)
			if (err != nil) != tt.wantErr || (err == nil && (file != tt.file || *dir != tt.dir)) {
				t.Fatalf("parseFile(%q) = %q, %v with --data-dir %q; want %q, error %v, --data-dir %q",
					tt.args, file, err, *dir, tt.file, tt.wantErr, tt.dir)
			}
		})
	}
}

// TestSnapshotCommandHelp: each command's --help prints its usage and
// succeeds; a missing or unknown command fails with the usage.
func TestSnapshotCommandHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"save", "--help"}, {"status", "-h"}, {"restore", "--help"}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"snapshot"}, args...), func(string) string { return "" }, &stdout, &stderr)
		if err != nil || !strings.Contains(stdout.String()+stderr.String(), "Usage: httpkv snapshot") {
			t.Errorf("httpkv snapshot %s = %v with output %q, want the usage and success", strings.Join(args, " "), err, stdout.String()+stderr.String())
		}
	}
	for _, args := range [][]string{{}, {"nope"}, {"restore", "f"}} {
		var stderr bytes.Buffer
		err := run(context.Background(), append([]string{"snapshot"}, args...), func(string) string { return "" }, io.Discard, &stderr)
		if err == nil || !strings.Contains(stderr.String(), "Usage: httpkv snapshot") {
			t.Errorf("httpkv snapshot %s = %v with stderr %q, want a failure and the usage", strings.Join(args, " "), err, stderr.String())
		}
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
