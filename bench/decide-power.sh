#!/usr/bin/env bash
# Power: is a 5% slowdown called `regressed` within 12 repeats a side, and
# does fslab need more repeats than fsperf's or LKP's rules on the same
# data? (issue 35, done-when 2)
#
# The slowdown is real: three identical test FUSE filesystems (tests/faultfs.rs,
# mounted by the test process, every write(2) one request of its daemon)
# whose writes take DELAY_US each; the "slow" one's writes take 5.26% of the
# calibrated time per write longer, so its IOPS are 95% of the others'. Each
# trial is one interleaved `fslab run` of 12 repeats of the three arms (a
# random arm order per repeat), a 4 KiB write workload of SIZE per cell.
# On each trial's per-repeat IOPS:
#   - fslab: the sequential verdict an adaptive run 3..12 draws (looks after
#     3,4,5,7,9,12 at the calibrated level, 5% false calls over all looks;
#     the library's own decide()), and whether its interval holds the
#     injected change;
#   - fsperf: test mean outside base mean ± 1.96 σ of the base;
#   - LKP `lkp compare` (lib/stats.rb is_changed_stats, no options): each
#     side's median outside the other's min..max, medians > 1% apart;
#   - LKP with `distance` (its bisection): min..max ranges apart, the gap
#     more than half the medians' difference;
#   the latter three checked after every repeat from 2 (3 for LKP) to 12,
#   as someone repeating until the rule fires would use them.
# Power: share of trials where "slow" was called regressed within 12, and
# the repeats a side it took. A/A: share of trials where the identical
# "same" arm was called different (fslab: regressed or improved) at any look.
#
# The FUSE filesystem lives in the test binary, so the bench is an ignored
# test (tests/bisect.rs, power_of_fslab_fsperf_and_lkp_on_a_five_percent_slowdown),
# run in a debug build (the measured time is the daemon's delay, not fslab's CPU).
#
#   bench/decide-power.sh                  # M=30 trials, 5%  (needs root, /dev/fuse)
#   M=10 bench/decide-power.sh             # fewer trials
#   SLOWDOWN=0.15 bench/decide-power.sh    # another injected slowdown
#   DELAY_US=2000 SIZE=512k                # per-write delay, bytes per cell
#
# RESULTS (2026-12-05, this shared 2-core machine, debug build, `M=30
# bench/decide-power.sh`, 475 s; load average 2-5 during it, so the noise per
# run swung between 1% and 30% from one trial to the next):
#   calibration: 426 IOPS (2348 µs a write); slow arm +124 µs a write:
#   IOPS change injected -5.02%, measured -4.34% (mean of the 30 trials)
#   rule                            slow: regressed  repeats a side      A/A false
#                                                    (mean/median/max)
#   fslab (sequential, 5% overall)   21/30  70%        4.6 / 4 / 12       0/30   0%
#   fsperf (mean ± 1.96σ)            24/30  80%        2.3 / 2 / 4       11/30  37%
#   LKP compare (median vs range)    21/30  70%        3.0 / 3 / 3        8/30  27%
#   LKP bisect (ranges apart, gap)   14/30  47%        3.3 / 3 / 7        0/30   0%
#   fslab's interval held the injected change in 21 of its 21 regressed calls.
#   The 21 trials at a quiet moment (base cv per run 1.1-4.7%): fslab called
#   20 regressed (95%; after 3 repeats in 9, 4 in 6, 5 in 1, 7 in 2, 12 in 2),
#   fsperf 19, LKP compare 18, LKP bisect 13. The 9 noisy trials (cv 6.5-31%):
#   fslab called 1 regressed, 7 undecided and 1 improved (+15.5% [+1.2%,
#   +31.9%] at cv 24%: load that came and went within the run hit the base
#   arm's first three repeats, which a test of independent runs cannot tell
#   from a change).
# A second run right after (405 s, load average ~3, cv per run median 2.0%):
#   calibration: 457 IOPS (2187 µs a write); slow arm +115 µs: injected
#   -5.00%, measured -5.12%
#   fslab (sequential, 5% overall)   25/30  83%        4.4 / 3 / 12       1/30   3%
#   fsperf (mean ± 1.96σ)            26/30  87%        2.1 / 2 / 5        8/30  27%
#   LKP compare (median vs range)    24/30  80%        3.1 / 3 / 5        6/30  20%
#   LKP bisect (ranges apart, gap)   15/30  50%        3.0 / 3 / 3        1/30   3%
#   once at 12 repeats: fsperf regressed 20/30, A/A false 0/30; LKP compare
#   17/30, 0/30; LKP bisect 1/30, 0/30.
#   fslab's interval held the injected change in 25 of its 25 regressed calls.
#   25 trials at a quiet moment (cv <= 5%): fslab 24 (96%), fsperf 23, LKP
#   compare 22, LKP bisect 14.
# Reading: with a quiet machine (cv per run <= ~3%) fslab finds the 5% within
# 12 repeats in >= 90% of trials and its interval holds the 5% every time;
# on a loaded one no rule does. fslab needs more repeats than fsperf's and
# LKP's rules (3-4 against 2-3), because those call a change whenever they
# first look past their line: on the identical arm they call one in 37% and
# 27% of trials when checked after every repeat. LKP's bisect rule calls no
# A/A difference but finds the 5% less often (47%) than fslab. The done-when
# "no more repeats than fsperf's and LKP's rules" holds only against a rule
# with as few false calls (LKP bisect: 3 trials of 30 where fslab needed
# more).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench: needs root (FUSE mounts)" >&2; exit 2; }
[ -e /dev/fuse ] || { echo "bench: needs /dev/fuse" >&2; exit 2; }
cd "$root"
FSLAB_REQUIRE_ALL=1 \
FSLAB_POWER_TRIALS=${M:-30} \
FSLAB_POWER_SLOWDOWN=${SLOWDOWN:-0.05} \
FSLAB_POWER_DELAY_US=${DELAY_US:-2000} \
FSLAB_POWER_SIZE=${SIZE:-512k} \
    cargo test -q --test tests power_of_fslab_fsperf_and_lkp_on_a_five_percent_slowdown \
    -- --ignored --nocapture --test-threads 1
