package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// maxMessageBytes bounds one Server-Sent Events message a stream reads:
// a revision's events come in one message, and a txn of 128 puts of
// 1.5 MiB values is 192 MiB.
const maxMessageBytes = 256 << 20

// sseEvent is one message of a Server-Sent Events stream.
type sseEvent struct {
	id    string // the id field of this message; "" if it had none
	hasID bool
	event string // the event field; "" for the default event
	data  []byte
}

// sseReader reads Server-Sent Events as the HTML standard frames them.
type sseReader struct {
	r     *bufio.Reader
	retry int // the last retry field, in ms; 0 if none came
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

var errMessageTooLarge = fmt.Errorf("a message of the stream is over %d MiB", maxMessageBytes>>20)

// next returns the next message with data. It returns io.EOF when the
// stream ends between messages, and io.ErrUnexpectedEOF inside one.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data []byte
	started := false
	for {
		line, err := s.line()
		if err != nil {
			if err == io.EOF && started {
				err = io.ErrUnexpectedEOF
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if data != nil {
				ev.data = data[:len(data)-1] // the last "\n"
				return ev, nil
			}
			ev, started = sseEvent{}, false
			continue
		}
		started = true
		if line[0] == ':' {
			continue // a comment: keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if len(data)+len(value) >= maxMessageBytes {
				return sseEvent{}, errMessageTooLarge
			}
			data = append(append(data, value...), '\n')
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id, ev.hasID = string(value), true
			}
		case "event":
			ev.event = string(value)
		case "retry":
			if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
				s.retry = ms
			}
		}
	}
}

// line reads one line without its end, \n or \r\n.
func (s *sseReader) line() ([]byte, error) {
	var long []byte
	for {
		part, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(part) >= maxMessageBytes {
				return nil, errMessageTooLarge
			}
			long = append(long, part...)
			continue
		}
		if err != nil {
			if len(part) > 0 || len(long) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line := part
		if long != nil {
			line = append(long, part...)
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		return line, nil
	}
}
