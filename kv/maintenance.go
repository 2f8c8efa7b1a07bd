package kv

// Alarm names an alarm a backend can raise.
type Alarm string

// AlarmNoSpace is raised when a write would take the backend past its
// quota. While it is active, writes that add data (puts, txns with puts,
// lease grants) fail with ErrNoSpace; reads, deletes (txns of deletes
// too) and compaction work. It stays until disarmed, even across
// restarts, as in etcd.
const AlarmNoSpace Alarm = "NOSPACE"
