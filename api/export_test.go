package api

import (
	"strings"
	"time"
)

// SealSessionToken seals a session as withSession hands it out: the
// store's token, and the time of the client's last write (zero: none).
func SealSessionToken(secret []byte, storeToken string, wrote time.Time) string {
	return newSessionSeal(secret).seal(sealedSession{store: storeToken, wrote: wrote})
}

// MaxSealedBytes is the longest token withSession issues.
var MaxSealedBytes = maxSealedBytes

// ProblemTypes lists the type of every problem the shop answers, one per
// error code statusOf knows.
func ProblemTypes() []string {
	var types []string
	for code := range statusOf {
		types = append(types, problemBase+strings.ReplaceAll(code, "_", "-"))
	}
	return types
}
