# syntax=docker/dockerfile:1
# Build: CGO stays on for the console's SQLite store (mattn/go-sqlite3, #7); the model core is pure Go.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -ldflags="-s -w" -o /out/livehat .

# Run: a small Debian image, an unprivileged user, data in a volume.
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /home/livehat --uid 10001 livehat
COPY --from=build /out/livehat /usr/local/bin/livehat
USER livehat
WORKDIR /home/livehat
EXPOSE 8080
ENTRYPOINT ["livehat", "serve"]
CMD ["--addr", ":8080"]
