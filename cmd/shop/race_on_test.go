//go:build race

package main

// raceDetector is true in a test binary built with -race, whose
// concurrency costs several times more CPU: the biggest runs scale down.
const raceDetector = true
