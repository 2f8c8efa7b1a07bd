package snapshot

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
)

// HashSize is the size of a snapshot's trailer: the SHA-256 of the bytes
// before it.
const HashSize = sha256.Size

// Sentinel errors. Callers tell failures apart with errors.Is.
var (
	// ErrCorrupt: the file is not a whole, intact snapshot (too short, a
	// hash that does not match, a store that does not check out).
	ErrCorrupt = errors.New("snapshot: corrupt")
	// ErrNotEmpty: Restore into a directory that already holds something.
	ErrNotEmpty = errors.New("snapshot: data directory not empty")
)

// Source is a backend's point-in-time copy, as Write needs it: WriteTo
// writes exactly Size bytes.
type Source interface {
	Size() int64
	WriteTo(w io.Writer) (int64, error)
}

// Write writes src's bytes and then their SHA-256 to w: Size()+HashSize
// bytes in all, unless it fails.
func Write(w io.Writer, src Source) (int64, error) {
	h := sha256.New()
	n, err := src.WriteTo(&hashingWriter{w: w, h: h})
	if err != nil {
		return n, err
	}
	if n != src.Size() {
		return n, fmt.Errorf("snapshot: the source wrote %d bytes, not the %d it announced", n, src.Size())
	}
	m, err := w.Write(h.Sum(nil))
	return n + int64(m), err
}

// hashingWriter hashes what it passes on. Unlike io.MultiWriter it hashes
// only what w took.
type hashingWriter struct {
	w io.Writer
	h hash.Hash
}

func (hw *hashingWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	return n, err
}

// Checker verifies a snapshot written through it: it hashes everything
// but the last HashSize bytes, which it keeps back to compare.
type Checker struct {
	h    hash.Hash
	n    int64
	tail []byte // the last HashSize bytes seen, or fewer at the start
}

// NewChecker returns a Checker that has seen nothing.
func NewChecker() *Checker {
	return &Checker{h: sha256.New(), tail: make([]byte, 0, 2*HashSize)}
}

// Write hashes p, less what may still turn out to be the trailer. It
// never fails.
func (c *Checker) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if len(p) >= HashSize {
		c.h.Write(c.tail)
		c.h.Write(p[:len(p)-HashSize])
		c.tail = append(c.tail[:0], p[len(p)-HashSize:]...)
		return len(p), nil
	}
	c.tail = append(c.tail, p...)
	if over := len(c.tail) - HashSize; over > 0 {
		c.h.Write(c.tail[:over])
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
	return len(p), nil
}

// Check reports whether what was written is a whole snapshot: at least
// a trailer, which is the SHA-256 of the bytes before it. It returns that
// hash, in hex.
func (c *Checker) Check() (string, error) {
	if len(c.tail) < HashSize {
		return "", fmt.Errorf("%w: %d bytes, shorter than its %d-byte hash", ErrCorrupt, c.n, HashSize)
	}
	sum := c.h.Sum(nil)
	if subtle.ConstantTimeCompare(sum, c.tail) != 1 {
		return "", fmt.Errorf("%w: the SHA-256 of its %d bytes of data is %x, its last %d bytes say %x: truncated or damaged",
			ErrCorrupt, c.n-HashSize, sum, HashSize, c.tail)
	}
	return hex.EncodeToString(sum), nil
}

// Written returns how many bytes were written, trailer included.
func (c *Checker) Written() int64 { return c.n }

// Verify reads the snapshot file at path to its end and checks its hash.
// It returns the hash, in hex, and the file's size.
func Verify(path string) (hash string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	c := NewChecker()
	if _, err := io.Copy(c, f); err != nil {
		return "", 0, fmt.Errorf("snapshot: reading %s: %w", path, err)
	}
	hash, err = c.Check()
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	return hash, c.Written(), nil
}
