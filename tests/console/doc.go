// Package console tests the embedded web console's key views as a user
// meets them (browsing, editing, comparing, history, live updates, the
// bounds on what a value costs the page): the real binary serving it and
// Chromium driving it. The sections for running a store are tested in
// console/admin.
package console
