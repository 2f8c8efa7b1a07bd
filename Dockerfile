# syntax=docker/dockerfile:1
# A static httpkv binary on a minimal base, run as a non-root user with its
# data in a volume.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/httpkv ./cmd/httpkv \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/httpkv /usr/local/bin/httpkv
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME ["/data"]
EXPOSE 2378
ENV HTTPKV_LISTEN=0.0.0.0:2378 \
    HTTPKV_DATA_DIR=/data
# distroless has no shell or curl: the binary checks its own /health.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/httpkv", "health", "--url", "http://127.0.0.1:2378/health"]
ENTRYPOINT ["/usr/local/bin/httpkv"]
