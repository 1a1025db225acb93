package api

import "time"

// SealSessionToken seals a session as withSession hands it out: the
// store's token, and the time of the client's last write (zero: none).
func SealSessionToken(secret []byte, storeToken string, wrote time.Time) string {
	return newSessionSeal(secret).seal(sealedSession{store: storeToken, wrote: wrote})
}

// MaxSealedBytes is the longest token withSession issues.
var MaxSealedBytes = maxSealedBytes
