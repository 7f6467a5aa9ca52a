# syntax=docker/dockerfile:1
# Tollgate in a container: built in one stage (TypeScript and the dashboard bundle), production
# dependencies installed in another, and only dist/, node_modules (without dev dependencies) and the
# example config copied into a slim runtime image that runs as the unprivileged `node` user.
#
#   docker build -t tollgate .
#   docker run -d --name tollgate -p 8080:8080 -v tollgate-data:/data -e OPENAI_API_KEY tollgate
#   docker exec tollgate tollgate keys create --name alice --balance 10
#
# /data is the working directory: on first start ./tollgate.yaml is created there from the example
# (edit it in the volume, or mount your own at /data/tollgate.yaml), and SQLite lives in /data/data/.
# Node 24 (LTS): CI runs the unit tests, an end-to-end smoke and the production install on it.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS toolchain
# On Node 22.14+ and 24 the SQLite driver (better-sqlite3 13) ships its binary. Only a Node 20 image
# compiles one, better-sqlite3 12 (better-sqlite3-node20, when no prebuilt binary can be fetched),
# against Node's own headers, so the build needs nothing from the internet but the npm registry.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
WORKDIR /app

FROM toolchain AS build
COPY package.json package-lock.json ./
# Scripts off: `prepare` would build before the sources are here; esbuild's own check is run after.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild esbuild
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY dashboard ./dashboard
COPY scripts/build-dashboard.mjs ./scripts/
RUN npm run build

FROM toolchain AS deps
COPY package.json package-lock.json ./
# The Node 20 driver is built only where it is used: Node-API below 10 (src/storage/sqlite/driver.ts).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && if [ "$(node -p process.versions.napi)" -lt 10 ]; then npm rebuild better-sqlite3-node20; fi

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# dist/ holds the server and the dashboard it serves (dist/dashboard/).
COPY --from=build /app/dist ./dist
COPY package.json tollgate.example.yaml ./
COPY bin ./bin
RUN ln -s /app/bin/tollgate.js /usr/local/bin/tollgate \
  && mkdir -p /data \
  && chown node:node /data
USER node
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
# Readiness, not just liveness: the database answers and the gateway is not shutting down. `tollgate
# health` asks GET /ready where ./tollgate.yaml (or $TOLLGATE_CONFIG) says the gateway listens, so a
# changed server.port is followed; it gives up before Docker's own timeout, so the reason is recorded.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["tollgate", "health", "--timeout", "4"]
# SIGTERM (docker stop) drains in-flight requests for server.shutdown_grace_seconds (default 30 s):
# give `docker stop` at least that, e.g. `docker stop -t 45 tollgate`.
STOPSIGNAL SIGTERM
CMD ["tollgate", "serve", "--host", "0.0.0.0"]
