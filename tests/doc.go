// Package tests holds the tests that run httpkv as a whole, in processes of
// its own: the crash test kills a writer mid-commit and checks what a
// reopened store holds, and the end-to-end tests start the real binary.
//
// A test that needs a child process other than the binary re-executes the
// test binary; TestMain picks the child's role from its environment.
package tests
