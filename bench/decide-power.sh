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
# the repeats a side it took; then each rule used once at a fixed n (3..12),
# and the fewest repeats at which each reaches 90% power with at most 5% A/A
# false calls (the same error rates for all). A/A: share of trials where the identical
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
# A third run (2026-12-06, 350 s, load average ~1, cv per run of base
# 0.7-3.9%, median 1.6%), which also prints each rule used once at a fixed
# n (as fsperf and LKP run it: a set number of runs, then the rule):
#   calibration: 432 IOPS (2313 µs a write); slow arm +122 µs: injected
#   -5.01%, measured -5.26%
#   fslab (sequential, 5% overall)   30/30 100%        3.7 / 3 / 9        0/30   0%
#   fsperf (mean ± 1.96σ)            30/30 100%        2.4 / 2 / 10      10/30  33%
#   LKP compare (median vs range)    29/30  97%        3.3 / 3 / 11       6/30  20%
#   LKP bisect (ranges apart, gap)   25/30  83%        3.0 / 3 / 3        3/30  10%
#   fslab's interval held the injected change in 30 of its 30 regressed calls.
#   once at n a side: slow called regressed / A/A false calls, of 30
#   rule                               n=3   n=4   n=5   n=6   n=8  n=10  n=12
#   fslab, one look (Welch, 5%)       26/0  26/0  29/0  28/2  30/2  30/0  30/0
#   fsperf (mean ± 1.96σ)             28/4  26/2  26/2  25/2  23/1  23/0  23/0
#   LKP compare (median vs range)     28/5  27/1  28/1  25/0  23/1  24/0  26/0
#   LKP bisect (ranges apart, gap)    25/3  19/0  14/0   9/0   8/0   5/0   4/0
#   fewest repeats a side with >= 90% power and <= 5% A/A false calls:
#   fslab sequential 3.7 on average (at most 9); fslab one look 5; fsperf
#   none up to 12; LKP compare 4; LKP bisect none up to 12.
# Reading: at the same error rates (at most 5% of identical arms called
# different), fslab's sequential run needs fewer repeats than fsperf's
# 1.96σ rule and LKP's range-gap rule, which reach 90% power at no n up to
# 12: fsperf's line is 1.96 σ of single runs, so more runs do not narrow it
# (23/30 at 12), and LKP's min-max ranges widen with every run (25/30 at 3,
# 4/30 at 12). Checked after every repeat, they stop sooner only by calling
# identical arms different (33%, 10%).
# Earlier reading: with a quiet machine (cv per run <= ~3%) fslab finds the
# 5% within 12 repeats in >= 90% of trials and its interval holds the 5% every time;
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
