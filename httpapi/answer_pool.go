package httpapi

import "sync"

// maxPooledAnswer bounds the buffers answerBufs keeps: a list of the
// default 1,000 keys of a few hundred bytes each fits, and a rare larger
// answer is left to the collector rather than kept.
const maxPooledAnswer = 1 << 20

// answerBufs keeps the buffers list answers are built in for the next
// list. A list of 1,000 keys builds an answer of a few hundred KiB: taken
// from the heap each time, it is cleared, later scanned and returned to
// the operating system (madvise), which cost a list more than encoding its
// JSON. The pool holds at most a buffer per list being answered at once,
// and the collector empties it when it stays unused.
var answerBufs sync.Pool // of *[]byte

// getAnswerBuf returns an empty buffer, from the pool when it has one.
func getAnswerBuf() []byte {
	if p, ok := answerBufs.Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return nil
}

// putAnswerBuf gives b back once nothing refers to it any more: the answer
// it held has been written.
func putAnswerBuf(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledAnswer {
		return
	}
	answerBufs.Put(&b)
}
