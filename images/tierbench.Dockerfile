# The tierbench image: the static binary alone, FROM scratch, so that no
# image registry is ever needed. The build context holds this file and the
# binary, built with CGO_ENABLED=0 (no libc to carry).
FROM scratch
COPY tierbench /tierbench
ENTRYPOINT ["/tierbench"]
