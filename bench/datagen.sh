#!/usr/bin/env bash
# Data generation throughput per core for each data profile, with memcpy beside it.
#   bench/datagen.sh
set -euo pipefail
cd "$(dirname "$0")/.."
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, kernel $(uname -r)"
cargo run --release --quiet --example datagen
