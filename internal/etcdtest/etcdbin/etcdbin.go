// Package etcdbin finds or builds the etcd server that httpkv's tests and
// benchmarks run: the release pinned by the module in ../etcdserver, built
// from source once and kept in the user's cache, so that every test
// package and every run after the first reuses the same binary.
//
// The system's etcd is not used: Debian ships 3.4, whose watch and auth
// have defects fixed since, and a pinned build makes every machine test
// against the same etcd.
package etcdbin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// EnvVar names the environment variable that, when set, gives the path of
// an etcd binary to use instead of building one. .ci/run sets it after
// building once, so that parallel test packages never race to build.
const EnvVar = "HTTPKV_ETCD_BIN"

// serverModule is the module whose version the nested go.mod pins.
const serverModule = "go.etcd.io/etcd/server/v3"

// Path returns the etcd binary to run: $HTTPKV_ETCD_BIN when it is set
// (it must exist), otherwise the pinned release in the cache, built first
// if it is not there yet. Building takes a minute or two and needs the Go
// toolchain and the module proxy (or a warm module cache); concurrent
// callers, in this process or others, wait for one build.
func Path(ctx context.Context) (string, error) {
	if p := os.Getenv(EnvVar); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvVar, p, err)
		}
		return p, nil
	}
	src, err := sourceDir()
	if err != nil {
		return "", err
	}
	version, err := pinnedVersion(filepath.Join(src, "go.mod"))
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the etcd build: %w", err)
	}
	dir := filepath.Join(cache, "httpkv-etcd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "etcd-"+version)
	if checkExecutable(bin) == nil {
		return bin, nil
	}
	unlock, err := lockFile(filepath.Join(dir, "etcd-"+version+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if checkExecutable(bin) == nil { // built while this caller waited
		return bin, nil
	}
	if err := build(ctx, src, bin); err != nil {
		return "", fmt.Errorf("building etcd %s: %w", version, err)
	}
	return bin, nil
}

// sourceDir returns the directory of the nested module, found beside this
// file's source (tests always build from source) or, in a binary built
// with -trimpath, through the go.mod of the working directory's module.
func sourceDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Join(filepath.Dir(file), "..", "etcdserver")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if gomod := strings.TrimSpace(string(out)); err == nil && gomod != "" && gomod != os.DevNull {
		dir := filepath.Join(filepath.Dir(gomod), "internal", "etcdtest", "etcdserver")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
	}
	return "", errors.New("cannot find internal/etcdtest/etcdserver: run from httpkv's source tree")
}

// pinnedVersion reads the version of serverModule that the go.mod at path
// requires.
func pinnedVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(f) >= 2 && f[0] == serverModule {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s requires no %s", path, serverModule)
}

// build compiles the nested module into bin, through a temporary file
// renamed into place, so that no caller ever runs a half-written binary.
func build(ctx context.Context, src, bin string) error {
	tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
	defer os.Remove(tmp)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", tmp, ".")
	cmd.Dir = src
	// The nested module builds on its own, whatever the caller's
	// workspace or flags (a -mod=vendor or -race meant for httpkv).
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build in %s: %w\n%s", src, err, out.Bytes())
	}
	return os.Rename(tmp, bin)
}

// checkExecutable reports why path is not a regular executable file.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Mode().Perm()&0o111 == 0:
		return errors.New("not executable")
	}
	return nil
}
