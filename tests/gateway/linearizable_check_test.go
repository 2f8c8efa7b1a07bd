package gateway

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// linOp is an operation of a hand-written history: called at call,
// answered at ret (ignored when the answer is unknown: it never came).
type linOp struct {
	call, ret int64
	in        linInput
	out       linOutput
}

// linHistory turns ops into porcupine's operations, with the answer of an
// operation whose answer is unknown at the end of the history.
func linHistory(ops []linOp) []porcupine.Operation {
	var end int64
	for _, op := range ops {
		end = max(end, op.call, op.ret)
	}
	out := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		ret := op.ret
		if op.out.unknown {
			ret = end + 1
		}
		out[i] = porcupine.Operation{ClientId: i, Input: op.in, Call: op.call, Output: op.out, Return: ret}
	}
	return out
}

// Shorthands for the histories below.
func lput(key, value string) linInput { return linInput{kind: linPut, key: key, value: value} }
func lget(key string) linInput        { return linInput{kind: linGet, key: key} }
func ldel(key string) linInput        { return linInput{kind: linDelete, key: key} }
func lcas(key string, expect int64, value string) linInput {
	return linInput{kind: linCAS, key: key, expect: expect, value: value}
}
func wrote(rev int64) linOutput { return linOutput{rev: rev} }
func read(value string, mod, rev int64) linOutput {
	return linOutput{found: true, value: value, mod: mod, rev: rev}
}
func none(rev int64) linOutput { return linOutput{rev: rev} }
func lost() linOutput          { return linOutput{unknown: true} }

// TestLinearizableModel checks the model the gateway test's history is
// checked against: it accepts what a linearizable store may answer,
// unknown outcomes included, and rejects stale reads, lost or invented
// writes, revisions that go back, and two swaps of one revision.
func TestLinearizableModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ops  []linOp
		want bool
	}{
		{"sequential", []linOp{
			{0, 1, lput("a", "v1"), wrote(2)},
			{2, 3, lget("a"), read("v1", 2, 2)},
			{4, 5, lcas("a", 2, "v2"), linOutput{ok: true, rev: 3}},
			{6, 7, ldel("a"), linOutput{found: true, rev: 4}},
			{8, 9, lget("a"), none(4)},
		}, true},
		{"concurrent writes read in revision order", []linOp{
			{0, 5, lput("a", "v1"), wrote(3)},
			{1, 4, lput("a", "v2"), wrote(2)},
			{6, 7, lget("a"), read("v1", 3, 3)},
		}, true},
		{"stale read after a write returned", []linOp{
			{0, 1, lput("a", "v1"), wrote(2)},
			{2, 3, lput("a", "v2"), wrote(3)},
			{4, 5, lget("a"), read("v1", 2, 3)},
		}, false},
		{"read misses a finished write", []linOp{
			{0, 1, lput("a", "v1"), wrote(2)},
			{2, 3, lget("a"), none(2)},
		}, false},
		{"read of a value never written", []linOp{
			{0, 1, lput("a", "v1"), wrote(2)},
			{2, 3, lget("a"), read("v9", 2, 2)},
		}, false},
		{"read with the wrong mod_revision", []linOp{
			{0, 1, lput("a", "v1"), wrote(2)},
			{2, 3, lget("a"), read("v1", 5, 5)},
		}, false},
		{"write's revision below an earlier read's", []linOp{
			{0, 1, lget("a"), none(7)},
			{2, 3, lput("a", "v1"), wrote(5)},
		}, false},
		{"revisions go back", []linOp{
			{0, 1, lput("a", "v1"), wrote(4)},
			{2, 3, lput("a", "v2"), wrote(3)},
		}, false},
		{"a lost write that happened", []linOp{
			{0, 0, lput("a", "v1"), lost()},
			{2, 3, lget("a"), read("v1", 6, 6)},
			{4, 5, lput("a", "v2"), wrote(7)},
		}, true},
		{"a lost write that did not happen", []linOp{
			{0, 0, lput("a", "v1"), lost()},
			{1, 2, lput("a", "v2"), wrote(3)},
			{4, 5, lget("a"), read("v2", 3, 3)},
		}, true},
		{"a lost write seen, then unseen", []linOp{
			{0, 0, lput("a", "v1"), lost()},
			{2, 3, lget("a"), read("v1", 6, 6)},
			{4, 5, lget("a"), none(6)},
		}, false},
		{"a lost write with a revision below an earlier answer", []linOp{
			{0, 1, lget("a"), none(5)},
			{2, 2, lput("a", "v1"), lost()},
			{3, 4, lget("a"), read("v1", 4, 6)},
		}, false},
		{"two swaps of one revision", []linOp{
			{0, 1, lput("a", "v1"), wrote(2)},
			{2, 4, lcas("a", 2, "x"), linOutput{ok: true, rev: 3}},
			{2, 4, lcas("a", 2, "y"), linOutput{ok: true, rev: 4}},
		}, false},
		{"a swap that fails on the revision it compared", []linOp{
			{0, 1, lput("a", "v1"), wrote(2)},
			{2, 3, lcas("a", 2, "x"), linOutput{found: true, value: "v1", mod: 2, rev: 2}},
		}, false},
		{"a swap of an absent key", []linOp{
			{0, 1, lcas("a", 0, "v1"), linOutput{ok: true, rev: 2}},
			{2, 3, lcas("a", 0, "v2"), linOutput{found: true, value: "v1", mod: 2, rev: 2}},
			{4, 5, lcas("a", 2, "v3"), linOutput{ok: true, rev: 3}},
		}, true},
		{"a delete of what a lost swap wrote", []linOp{
			{0, 1, lput("a", "v1"), wrote(2)},
			{2, 2, lcas("a", 2, "v2"), lost()},
			{3, 4, ldel("a"), linOutput{found: true, rev: 4}},
			{5, 6, ldel("a"), none(4)},
		}, true},
		{"a delete of a key already deleted", []linOp{
			{0, 1, lput("a", "v1"), wrote(2)},
			{2, 3, ldel("a"), linOutput{found: true, rev: 3}},
			{4, 5, ldel("a"), linOutput{found: true, rev: 4}},
		}, false},
		{"keys are independent", []linOp{
			{0, 1, lput("a", "v1"), wrote(2)},
			{2, 3, lput("b", "w1"), wrote(3)},
			{4, 5, lget("b"), read("w1", 3, 3)},
			{4, 5, lget("a"), read("v1", 2, 3)},
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := porcupine.CheckOperations(linModel.ToModel(), linHistory(tc.ops))
			if res != tc.want {
				t.Errorf("CheckOperations(%s) = %v, want %v", tc.name, res, tc.want)
			}
		})
	}
}
