package e2e

const Module = "github.com/httpkv/httpkv/"
