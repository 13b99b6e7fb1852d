#!/usr/bin/env bash
# Compares what memdoctor's agent costs a service with no agent, grafana/pyroscope-go and
# mosn.io/holmes. Each configuration runs several times (default 4), each run in a fresh
# service process on loopback, configurations interleaved; a full run takes about 9 minutes
# on 2 cores. Extra flags go to `bench-agent compare` (-runs, -requests, -warmup,
# -concurrency, -configs). The Markdown table goes to stdout, progress to stderr.
#
#   bench/agent/run.sh | tee /tmp/agent-bench.md
set -euo pipefail
# bench/agent is a module of its own, outside the repository's go.work: its go.mod points at ../../agent.
export GOWORK=off
cd "$(dirname "$0")"
bin="$(mktemp -d)/bench-agent"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" .
"$bin" compare "$@"
