package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// benchTool is the load tool's binary (cmd/httpkv-bench). `httpkv bench`
// runs it with the same arguments, so that the server's binary carries
// none of the tool: its workloads, its clients of etcd, its null server.
const benchTool = "httpkv-bench"

// benchStopGrace is how long the tool has to stop once httpkv is told to
// (it stops at once: a run prints what it measured, the null server
// closes), before it is killed.
const benchStopGrace = 10 * time.Second

// runBench is `httpkv bench`: it runs the tool found beside this binary,
// or else on PATH, with args, its output going to stdout and stderr.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	path, err := findBenchTool()
	if err != nil {
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprintf(stdout, "usage: httpkv bench [flags]\n\nRuns the load tool %s with the same arguments; %v.\n", benchTool, err)
			return nil
		}
		return err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Stopped as httpkv is: a run still prints what it measured.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = benchStopGrace
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", benchTool, err)
	}
	return nil
}

// findBenchTool returns the path of the tool: in this binary's directory,
// where a build of both puts them, or else on PATH.
func findBenchTool() (string, error) {
	dir := ""
	if self, err := os.Executable(); err == nil {
		dir = filepath.Dir(self)
		p := filepath.Join(dir, benchTool)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(benchTool)
	if err == nil {
		return p, nil
	}
	if !errors.Is(err, exec.ErrNotFound) {
		return "", err
	}
	return "", fmt.Errorf("%s is neither beside this binary (in %s) nor on PATH: build it with \"go build -o %s ./cmd/%s\" in httpkv's source tree",
		benchTool, dir, filepath.Join(dir, benchTool), benchTool)
}
