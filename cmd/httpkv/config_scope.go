package main

import (
	"fmt"
	"slices"
	"strings"
)

// flagScope is the one backend a flag applies to, and where its setting
// lives with the other: a flag that does nothing with the backend chosen
// is refused, not ignored (a gateway given --quota-backend-bytes would
// otherwise take writes past it, the quota being etcd's). Flags without
// a scope apply to both backends: the API's bounds, TLS, CORS, logging,
// watch and auth settings, and --max-txn-ops and --max-response-bytes,
// which a gateway checks before asking etcd. docs/design.md
// ("Gateways over an etcd cluster") has the table.
type flagScope struct {
	backend string // "embedded" or "etcd"
	other   string // what to do instead with the other backend
}

// flagScopes are the flags of the embedded store alone; every --etcd-*
// flag is a gateway's alone (scopeOf).
var flagScopes = map[string]flagScope{
	"data-dir":                  {"embedded", "a gateway keeps nothing on disk (etcd keeps the data, in its members' --data-dir)"},
	"quota-backend-bytes":       {"embedded", "the quota is etcd's: set etcd's --quota-backend-bytes on its members"},
	"unsafe-no-fsync":           {"embedded", "a gateway writes nothing to disk: etcd's members take their own --unsafe-no-fsync"},
	"auto-compaction-mode":      {"embedded", "compaction is etcd's: set etcd's --auto-compaction-mode on its members"},
	"auto-compaction-retention": {"embedded", "compaction is etcd's: set etcd's --auto-compaction-retention on its members"},
}

// scopeOf returns the scope of the flag name, if it applies to one
// backend alone.
func scopeOf(name string) (flagScope, bool) {
	if strings.HasPrefix(name, "etcd-") {
		return flagScope{"etcd", "it configures a gateway to an etcd cluster (--backend etcd)"}, true
	}
	s, ok := flagScopes[name]
	return s, ok
}

// checkScopes refuses the first flag (by name) set explicitly that does
// not apply to backend. set maps each flag set to how it was: "--name"
// on the command line, or its HTTPKV_ variable.
func checkScopes(backend string, set map[string]string) error {
	names := make([]string, 0, len(set))
	for name := range set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if s, ok := scopeOf(name); ok && s.backend != backend {
			return fmt.Errorf("%s does not apply to --backend %s: %s", set[name], backend, s.other)
		}
	}
	return nil
}
