# tierbench image, FROM scratch: nothing is pulled from a registry.
#
# Build the static binary first, then the image, from the repository root:
#
#   CGO_ENABLED=0 go build -o tierbench ./cmd/tierbench
#   docker build -t tierbench .
#
# `tierbench run --runtime docker` builds the same image itself through the
# Docker API from images/tierbench.Dockerfile (these instructions, kept
# identical by orchestrator's tests) and the binary it runs from.
FROM scratch
COPY tierbench /tierbench
ENTRYPOINT ["/tierbench"]
