package gateway

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// A porcupine model of one key of the store as a register with revisions,
// for checking that a history of puts, reads, compare-and-swap txns and
// deletes, recorded by concurrent clients, is linearizable.
//
// The history is partitioned by key: every operation touches one key.
// Beyond values, the model checks what a revision promises: a write
// linearized after an operation on the same key that answered at revision
// H (a read, a write, a delete) has a revision above H, and a read reports
// the mod_revision of the write it sees. (Revisions are the store's, shared
// by all keys, but the partitions do not compare them across keys.)

// linKind is what an operation does.
type linKind int

const (
	linPut linKind = iota
	linGet
	linCAS    // a txn: if mod_revision(key) == expect then put value else range key
	linDelete // delete one key
)

// linInput is an operation's request. Values are unique across the
// history, so a read names the write it saw.
type linInput struct {
	kind   linKind
	key    string
	value  string // put and cas
	expect int64  // cas: the mod_revision compared; 0 means the key is absent
}

// linOutput is an operation's answer. An operation whose answer never came
// (a cut connection, a timeout, a 503) has unknown set: it may have taken
// effect or not, at any time after its call, and its return time is the
// end of the history.
type linOutput struct {
	unknown bool
	rev     int64  // header revision: of the write, or the store's when read
	found   bool   // get, cas failure: the key exists; delete: deleted one key
	value   string // get, cas failure: the value read
	mod     int64  // get, cas failure: the mod_revision read
	ok      bool   // cas: the compare held
}

// linState is one key as the model knows it. The mod_revision of a value
// written by an operation with an unknown answer is not known until a read
// reports it; floor bounds it and every later write from below.
type linState struct {
	exists bool
	value  string
	mod    int64 // 0 while unknown (or absent)
	floor  int64 // every write linearized from now on has a revision above floor
}

// observe is the state after a read that found value at mod, answered at
// revision rev, or false if the state cannot show that.
func (s linState) observe(value string, mod, rev int64) (linState, bool) {
	if !s.exists || s.value != value || mod > rev {
		return s, false
	}
	if s.mod == 0 {
		// The value of a write whose answer was lost: its revision is
		// above everything before it.
		if mod <= s.floor {
			return s, false
		}
		s.mod = mod
	} else if s.mod != mod {
		return s, false
	}
	s.floor = max(s.floor, rev)
	return s, true
}

// absent is the state after a read that found no key at revision rev.
func (s linState) absent(rev int64) (linState, bool) {
	if s.exists {
		return s, false
	}
	s.floor = max(s.floor, rev)
	return s, true
}

// write is the state after a write of value known to be at revision rev.
func (s linState) write(value string, rev int64) (linState, bool) {
	if rev <= s.floor {
		return s, false
	}
	return linState{exists: true, value: value, mod: rev, floor: rev}, true
}

// compareHolds reports whether mod_revision == expect may hold in s.
func (s linState) compareHolds(expect int64) bool {
	switch {
	case !s.exists:
		return expect == 0
	case s.mod == 0:
		return expect > s.floor
	default:
		return s.mod == expect
	}
}

// linStep returns every state s may be in after the operation in, out.
func linStep(s linState, in linInput, out linOutput) []linState {
	one := func(next linState, ok bool) []linState {
		if !ok {
			return nil
		}
		return []linState{next}
	}
	lost := linState{exists: true, value: in.value, floor: s.floor} // a write whose revision is unknown
	switch in.kind {
	case linGet:
		if out.found {
			return one(s.observe(out.value, out.mod, out.rev))
		}
		return one(s.absent(out.rev))
	case linPut:
		if out.unknown {
			return []linState{s, lost}
		}
		return one(s.write(in.value, out.rev))
	case linDelete:
		switch {
		case out.unknown && s.exists:
			return []linState{s, {floor: s.floor}}
		case out.unknown:
			return []linState{s}
		case out.found && s.exists && out.rev > s.floor:
			return []linState{{floor: out.rev}}
		case !out.found:
			return one(s.absent(out.rev))
		}
		return nil
	case linCAS:
		holds := s.compareHolds(in.expect)
		switch {
		case out.unknown && holds:
			return []linState{s, lost}
		case out.unknown:
			return []linState{s}
		case out.ok && holds:
			return one(s.write(in.value, out.rev))
		case out.ok:
			return nil
		case out.found:
			next, ok := s.observe(out.value, out.mod, out.rev)
			return one(next, ok && next.mod != in.expect)
		case in.expect != 0:
			return one(s.absent(out.rev))
		}
		return nil
	}
	return nil
}

// linModel is the porcupine model of a store of registers with revisions.
var linModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(linInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []any { return []any{linState{}} },
	Step: func(state, input, output any) []any {
		var out []any
		for _, s := range linStep(state.(linState), input.(linInput), output.(linOutput)) {
			out = append(out, s)
		}
		return out
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		var op string
		switch in.kind {
		case linPut:
			op = fmt.Sprintf("put(%s, %s)", in.key, in.value)
		case linGet:
			op = fmt.Sprintf("get(%s)", in.key)
		case linCAS:
			op = fmt.Sprintf("cas(%s, mod=%d, %s)", in.key, in.expect, in.value)
		case linDelete:
			op = fmt.Sprintf("delete(%s)", in.key)
		}
		switch {
		case out.unknown:
			return op + " -> ?"
		case in.kind == linCAS && out.ok:
			return fmt.Sprintf("%s -> ok @%d", op, out.rev)
		case in.kind == linPut:
			return fmt.Sprintf("%s -> @%d", op, out.rev)
		case in.kind == linDelete:
			return fmt.Sprintf("%s -> deleted=%v @%d", op, out.found, out.rev)
		case out.found:
			return fmt.Sprintf("%s -> %s mod=%d @%d", op, out.value, out.mod, out.rev)
		}
		return fmt.Sprintf("%s -> none @%d", op, out.rev)
	},
	DescribeState: func(state any) string {
		s := state.(linState)
		if !s.exists {
			return fmt.Sprintf("absent (floor %d)", s.floor)
		}
		return fmt.Sprintf("%s mod=%d (floor %d)", s.value, s.mod, s.floor)
	},
}
