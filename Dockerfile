# tierbench image, FROM scratch: nothing is pulled from a registry.
#
# Build the static binary first, then the image, from the repository root:
#
#   CGO_ENABLED=0 go build -trimpath -o tierbench ./cmd/tierbench
#   docker build -t tierbench --build-arg REVISION=$(git rev-parse HEAD) .
#
# `tierbench run --runtime docker` builds the same image itself through the
# Docker API from images/tierbench.Dockerfile (these instructions, kept
# identical by orchestrator's tests) and the binary it runs from.
FROM scratch
# OCI labels: where the image's source is, and which version and commit
# of it the binary was built from (images.BuildArgs reads both from the
# binary's build info; by hand: --build-arg).
ARG VERSION=unknown
ARG REVISION=unknown
LABEL org.opencontainers.image.title="tierbench" \
      org.opencontainers.image.source="https://github.com/tierbench/tierbench" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY tierbench /tierbench
ENTRYPOINT ["/tierbench"]
