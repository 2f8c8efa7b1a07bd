package tests

import (
	"io"

	"github.com/httpkv/httpkv/internal/ssetest"
)

// The one event-stream parser of the tests is ssetest's; these names keep
// the watch tests short.
type sseMessage = ssetest.Message

func newSSEParser(r io.Reader) *ssetest.Parser { return ssetest.NewParser(r) }
