#!/usr/bin/env bash
# The tests that need a quiet machine, out of the default suite (Cargo.toml's
# quiet-machine feature): tests/telemetry.rs (an injected device latency is
# the await fslab reports, within 15%) and tests/interference.rs (a CPU
# burner marks a cell disturbed and quiet cells raise no alarm; twenty wrong
# setups are flagged with the right reason and twenty correct ones are not,
# tests/verdicts.rs). Any other load on the machine is, rightly, a
# disturbance to them: run this on an otherwise idle machine, as root.
#
#   bench/quiet-machine.sh
set -euo pipefail
cd "$(dirname "$0")/.."
load=$(cut -d' ' -f1 /proc/loadavg)
echo "load average before: $load (over 0.5 on a small machine: expect disturbed cells)"
FSLAB_REQUIRE_ALL=1 cargo test --release --features quiet-machine --test telemetry --test interference -- --test-threads 1
