// Package admin tests the embedded web console's sections for running a
// store (signing in, users and roles, leases, locks and elections, the
// cluster, export and import, and the screenshots of the docs): the real
// binary serving it and Chromium driving it.
package admin
