# syntax=docker/dockerfile:1
# The shop as one static binary on a distroless base, run as a non-root user.
#
#   docker build -t shop .
#   docker run -p 8080:8080 shop            # embedded store in /home/nonroot/data, no dev tokens
#   docker run -e SHOP_DEV=true -p 127.0.0.1:8080:8080 shop   # with dev tokens, this machine only
#   docker compose up --build               # on the Cosmos emulator (docs/cosmos.md)

FROM golang:1.26 AS build
WORKDIR /src
# Modules first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# CGO off: a static binary that needs no libc in the final image.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/shop ./cmd/shop

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/shop /shop
# uid 65532; its home is writable, so the embedded store's ./data can live there.
USER nonroot:nonroot
WORKDIR /home/nonroot
EXPOSE 8080
# A container is reached through its published port, so it listens on every
# interface; dev mode (tokens for anyone, admin ones included) is off unless
# the run turns it on, whatever the store.
ENV SHOP_ADDR=0.0.0.0:8080 SHOP_DEV=false
ENTRYPOINT ["/shop"]
CMD ["serve"]
