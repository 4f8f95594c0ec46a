// Package images holds what the tierbench container image is built from,
// shared by the root Dockerfile and compose.yaml (for people who drive
// the server and client roles by hand) and by the orchestrator's Docker
// runtime, which embeds the Dockerfile and builds the image through the
// engine's API from an in-memory context: the Dockerfile and the static
// binary, FROM scratch, never pulling anything.
package images

import _ "embed"

// Dockerfile is the image's Dockerfile; the build context beside it must
// hold the static binary as "tierbench". The root Dockerfile has the same
// instructions (a test keeps the two in step).
//
//go:embed tierbench.Dockerfile
var Dockerfile string

// BinaryName is the binary's name in the build context and, at the root
// of the image, its path: /tierbench.
const BinaryName = "tierbench"
