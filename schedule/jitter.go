package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"time"
)

// Jitter is the delay of a slot's run under a jitter of up to max: a
// deterministic function of the schedule's id (e.g. "workflow/name") and
// the slot, uniform in [0, max) to the microsecond (the store's
// resolution). Every worker computes the same delay for a slot, so a fire
// retried by another worker starts at the same time, and the delay is
// recorded with the fire. A max under a microsecond is no jitter.
func Jitter(id string, slot time.Time, max time.Duration) time.Duration {
	us := int64(max / time.Microsecond)
	if us <= 0 {
		return 0
	}
	h := sha256.Sum256([]byte(id + "\x00" + strconv.FormatInt(slot.UnixMicro(), 10)))
	return time.Duration(binary.BigEndian.Uint64(h[:8])%uint64(us)) * time.Microsecond
}
