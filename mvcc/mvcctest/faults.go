// Package mvcctest helps test code running on an mvcc.Store under disk
// faults, and code reading a store's file that someone tampered with. It
// holds no fakes of the store itself: a test opens a real store on a
// real file and injects failures at the commit, through
// mvcc.Options.Committer, or edits the closed file (Tamperings).
package mvcctest

import (
	"errors"
	"sync/atomic"
)

// ErrInjected is what an injected fault returns.
var ErrInjected = errors.New("mvcctest: injected disk fault")

// Fault modes of a Committer.
const (
	None   int32 = iota // commits run
	Before              // commits fail and write nothing: a write error
	After               // commits run, then report failure: an fsync error after the data reached the disk
)

// Committer is an mvcc.Committer whose commits fail on demand, from any
// goroutine. The zero Committer commits normally.
type Committer struct {
	mode   atomic.Int32
	failed atomic.Int64
}

// Set makes the following commits behave as mode (None, Before, After).
func (c *Committer) Set(mode int32) { c.mode.Store(mode) }

// Failed counts the commits that failed by injection.
func (c *Committer) Failed() int64 { return c.failed.Load() }

// Commit runs commit unless the mode says otherwise.
func (c *Committer) Commit(commit func() error) error {
	switch c.mode.Load() {
	case Before:
		c.failed.Add(1)
		return ErrInjected
	case After:
		if err := commit(); err != nil {
			return err
		}
		c.failed.Add(1)
		return ErrInjected
	}
	return commit()
}
