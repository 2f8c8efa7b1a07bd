package openapi

// Everything in this directory but the hand-written Go files, the
// converter and the TypeScript client's own sources is made by
// generate.sh; see there for each step.

//go:generate bash generate.sh
