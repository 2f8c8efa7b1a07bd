package main

import (
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestComposeFilesConfigureGateways reads the repository's compose files
// and checks the environment of every httpkv service as the server would
// take it, over the image's own (the Dockerfile's ENV): each HTTPKV_
// variable names a flag (an unknown one would be ignored without a
// word), and together they make a valid configuration, with no flag the
// service's backend refuses. docker-compose config checks the files'
// syntax in .ci/run; this checks what they tell httpkv.
func TestComposeFilesConfigureGateways(t *testing.T) {
	flags := map[string]bool{}
	if _, err := parseConfig(nil, func(string) string { return "" }, io.Discard); err != nil {
		t.Fatalf("the default configuration: %v", err)
	}
	for _, name := range flagNames(t) {
		flags["HTTPKV_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))] = true
	}
	files, _ := filepath.Glob("../../docker-compose*.yml")
	if len(files) < 2 {
		t.Fatalf("compose files: %v, want docker-compose.yml and docker-compose.cluster.yml", files)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Services map[string]struct {
				Image       string            `yaml:"image"`
				Environment map[string]string `yaml:"environment"`
			} `yaml:"services"`
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		gateways := 0
		for name, svc := range doc.Services {
			if !strings.HasPrefix(svc.Image, "httpkv:") {
				continue
			}
			gateways++
			for k := range svc.Environment {
				if strings.HasPrefix(k, "HTTPKV_") && !flags[k] {
					t.Errorf("%s: service %s sets %s, which names no flag of httpkv", file, name, k)
				}
			}
			env := maps.Clone(imageEnv(t))
			maps.Copy(env, svc.Environment)
			if _, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard); err != nil {
				t.Errorf("%s: service %s: its environment is not a valid configuration: %v", file, name, err)
			}
		}
		if gateways == 0 {
			t.Errorf("%s: no httpkv service", file)
		}
	}
}

// imageEnv returns the environment the Dockerfile's ENV lines give the
// image: KEY=VALUE pairs, continued over lines ending in a backslash.
func imageEnv(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	inEnv := false
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "ENV "); ok {
			line, inEnv = rest, true
		} else if !inEnv {
			continue
		}
		inEnv = strings.HasSuffix(line, "\\")
		for _, pair := range strings.Fields(strings.TrimSuffix(line, "\\")) {
			if k, v, ok := strings.Cut(pair, "="); ok {
				env[k] = v
			}
		}
	}
	if len(env) == 0 {
		t.Fatal("the Dockerfile sets no environment")
	}
	return env
}

// flagNames returns the names of the server's flags, as --help lists them.
func flagNames(t *testing.T) []string {
	t.Helper()
	var names []string
	var usage strings.Builder
	if _, err := parseConfig([]string{"--help"}, func(string) string { return "" }, &usage); err == nil {
		t.Fatal("--help did not stop parsing")
	}
	for _, line := range strings.Split(usage.String(), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "-") {
			name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(line, "-"), "-"), " ")
			names = append(names, name)
		}
	}
	if len(names) < 10 {
		t.Fatalf("--help lists %d flags:\n%s", len(names), usage.String())
	}
	return names
}
