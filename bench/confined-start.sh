#!/usr/bin/env bash
# Confined against unconfined starts of the pinned real servers
# (BenchmarkRealServersConfinedStart: each server as installed, from its
# command built to its tools listed, confined and observed as Rootkeeper
# runs it, interleaved with the unconfined start in every iteration), and
# a host's initialize through a confined bridge against an unconfined one
# (BenchmarkConfinedBridgeInitialize). Prints each server's ratio, then
# their median and the worst. Goals: median ≤ 1.15, worst ≤ 1.5; the
# bridge's added p50 ≤ 60 ms.
#
# usage: bench/confined-start.sh [ITERATIONS]   (default 5 per server)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5}
if ! out=$(go test -run '^$' -bench 'BenchmarkRealServersConfinedStart|BenchmarkConfinedBridgeInitialize' -benchtime "${n}x" -timeout 60m ./mcp/bridge/ 2>&1); then
	echo "$out" >&2
	exit 1
fi
echo "$out" | grep '^Benchmark'
# summary METRIC LABEL: the median, worst and best of METRIC over the servers.
summary() {
	echo "$out" | awk -v m="$1" '/^BenchmarkRealServersConfinedStart\// { for (i = 1; i < NF; i++) if ($(i+1) == m) print $i }' | sort -g |
		awk -v label="$2" '{ r[NR] = $1 } END {
		if (NR == 0) { print "no servers measured"; exit 1 }
		median = (NR % 2) ? r[(NR+1)/2] : (r[NR/2] + r[NR/2+1]) / 2
		printf "servers: %d  median %s: %.2f  worst: %.2f  best: %.2f\n", NR, label, median, r[NR], r[1]
	}'
}
summary ratio ratio
# The CPU a start costs (the server's and Rootkeeper's): steadier than
# wall time on a machine others load.
summary cpu-ratio "CPU ratio"
