package lifecycle

import "time"

// SystemClock is the wall clock. It is the only place lifecycle reads real
// time; everything else takes a Clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
