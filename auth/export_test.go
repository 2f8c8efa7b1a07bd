package auth

// LimiterLen returns how many entries the failed-login limiter holds.
func LimiterLen(s *Store) int { return s.limiter.len() }

// The limits of failed logins.
const (
	FailedBurst = failedBurst
	AddrBurst   = addrBurst
	AddrEvery   = addrEvery
)
