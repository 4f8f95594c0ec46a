# The tierbench image: the static binary alone, FROM scratch, so that no
# image registry is ever needed. The build context holds this file and the
# binary, built with CGO_ENABLED=0 (no libc to carry) and -trimpath (no
# build paths in it, so one source gives one binary, and one image tag,
# on every host).
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
