// Package console tests the embedded web console as a user meets it: the
// real binary serving it and Chromium driving it.
package console
