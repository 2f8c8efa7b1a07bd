package sink

import (
	"bufio"
	"net"
	"net/http"
	"time"
)

// Conn writes to a hijacked HTTP/1 connection. The response has no
// length and no chunking: it ends when the connection closes, which is
// what "Connection: close" announces. The Set's hangups notice the
// client leaving, or where they cannot, a small reader of its own.
type Conn struct {
	conn net.Conn
	left chan struct{} // closed when the client leaves
	// forget stops the hangups watching conn; nil when a reader does.
	forget func()
	reader chan struct{} // closed when the reader, if any, has returned
	// deadlineSet is when the write deadline was last moved to timeout
	// ahead; see Send.
	deadlineSet time.Time
	timeout     time.Duration
}

// deadlineSlack is how stale a stream's write deadline may grow before a
// send moves it: setting it costs a lock and a timer change, and with
// ten thousand streams sending an event each, setting it on every send
// was a tenth of their cost. Each piece of a send thus has between
// timeout less deadlineSlack and timeout.
const deadlineSlack = time.Second

// hijack takes the connection of w over and writes the response head from
// w's headers (those the middleware set included); hangups, when not nil,
// notice its client leaving; each send has timeout per piece (see
// Conn.Send). ok is false when w cannot be taken over (HTTP/2, a
// recorder): answer through w then. A non-nil error means the connection
// was taken and is already lost.
func hijack(w http.ResponseWriter, hangups *hangups, timeout time.Duration) (sink *Conn, ok bool, err error) {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, false, nil
	}
	hd := w.Header().Clone()
	hd.Set("Connection", "close")
	hd.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	head := bufio.NewWriterSize(conn, 1024)
	_, _ = head.WriteString("HTTP/1.1 200 OK\r\n")
	_ = hd.Write(head)
	_, _ = head.WriteString("\r\n")
	now := time.Now()
	// The server's read deadline, if any, is for requests: a stream reads
	// only to drop what its client sends.
	_ = conn.SetReadDeadline(time.Time{})
	_ = conn.SetWriteDeadline(now.Add(timeout))
	if err := head.Flush(); err != nil {
		conn.Close()
		return nil, true, err
	}
	// Whatever the client sent after its request is of no use; the read
	// buffer and its 4 KiB go with brw.
	_ = brw
	s := &Conn{conn: conn, left: make(chan struct{}), deadlineSet: now, timeout: timeout}
	if hangups != nil {
		s.forget, _ = hangups.watch(conn, s.left)
	}
	if s.forget == nil {
		s.reader = make(chan struct{})
		go s.read()
	}
	return s, true, nil
}

// read waits for the client to close its side; the stream owns it and
// waits for it in Close.
func (s *Conn) read() {
	defer close(s.reader)
	var buf [64]byte
	for {
		if _, err := s.conn.Read(buf[:]); err != nil {
			close(s.left)
			return
		}
	}
}

// Send writes b in pieces of Piece, moving the deadline before a piece
// once it is deadlineSlack stale: a piece taken is progress, and a large
// message taken slowly is not cut off for its size.
func (s *Conn) Send(b []byte) bool {
	for len(b) > 0 {
		if now := time.Now(); now.Sub(s.deadlineSet) >= deadlineSlack {
			if err := s.conn.SetWriteDeadline(now.Add(s.timeout)); err != nil {
				return false
			}
			s.deadlineSet = now
		}
		n := min(len(b), Piece)
		if _, err := s.conn.Write(b[:n]); err != nil {
			return false
		}
		b = b[n:]
	}
	return true
}

func (s *Conn) Gone() <-chan struct{} { return s.left }
func (s *Conn) Cut()                  { s.conn.Close() }

func (s *Conn) Close() {
	if s.forget != nil {
		s.forget()
	}
	s.conn.Close()
	if s.reader != nil {
		<-s.reader
	}
}
