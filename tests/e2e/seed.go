package e2e

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestRand returns a generator seeded from the environment variable env, or
// from the clock when it is unset, and logs the seed so that a failure can
// be replayed with env=<seed>.
func TestRand(tb testing.TB, env string) *rand.Rand {
	tb.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(env); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			tb.Fatalf("%s=%q: %v", env, v, err)
		}
		seed = n
	}
	tb.Logf("seed %d (replay with %s=%d)", seed, env, seed)
	return rand.New(rand.NewPCG(seed, seed))
}
