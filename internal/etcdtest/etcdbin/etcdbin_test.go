package etcdbin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPinnedVersion(t *testing.T) {
	tests := []struct {
		name, gomod, want string
	}{
		{"one-line require", "module m\n\nrequire go.etcd.io/etcd/server/v3 v3.6.16\n", "v3.6.16"},
		{"require block", "module m\n\nrequire (\n\tgo.etcd.io/etcd/api/v3 v3.6.1\n\tgo.etcd.io/etcd/server/v3 v3.5.21 // indirect\n)\n", "v3.5.21"},
		{"missing", "module m\n\nrequire go.etcd.io/etcd/client/v3 v3.6.16\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "go.mod")
			if err := os.WriteFile(path, []byte(tt.gomod), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := pinnedVersion(path)
			if got != tt.want || (err != nil) != (tt.want == "") {
				t.Errorf("pinnedVersion(%q) = %q, %v; want %q", tt.gomod, got, err, tt.want)
			}
		})
	}
}

// TestPinnedModule checks the nested module this package builds: it must
// exist beside it and pin a release.
func TestPinnedModule(t *testing.T) {
	src, err := sourceDir()
	if err != nil {
		t.Fatal(err)
	}
	v, err := pinnedVersion(filepath.Join(src, "go.mod"))
	if err != nil || !strings.HasPrefix(v, "v3.") {
		t.Errorf("pinned etcd server = %q, %v; want a v3 release", v, err)
	}
}

func TestPathFromEnv(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "etcd")
	plain := filepath.Join(dir, "plain")
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{exe, 0o755}, {plain, 0o644}} {
		if err := os.WriteFile(f.path, nil, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		env     string
		wantErr bool
	}{
		{exe, false},
		{plain, true},
		{filepath.Join(dir, "missing"), true},
		{dir, true},
	}
	for _, tt := range tests {
		t.Setenv(EnvVar, tt.env)
		got, err := Path(context.Background())
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), EnvVar) {
				t.Errorf("Path() with %s=%s = %q, %v; want an error naming %s", EnvVar, tt.env, got, err, EnvVar)
			}
		} else if got != tt.env || err != nil {
			t.Errorf("Path() with %s=%s = %q, %v; want that path", EnvVar, tt.env, got, err)
		}
	}
}
