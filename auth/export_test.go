package auth

// LimiterLen returns how many entries the failed-login limiter holds.
func LimiterLen(s *Store) int { return s.limiter.len() }

// The limits of failed logins.
const (
	FailedBurst = failedBurst
	AddrBurst   = addrBurst
	AddrEvery   = addrEvery
)

// CatchUpGap is the least time between two syncs for unknown tokens.
const CatchUpGap = catchUpGap
