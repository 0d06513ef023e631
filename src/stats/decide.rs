//! Deciding an A/B comparison in as few repeats as the noise allows:
//! `regressed` or `improved` by X% ± CI, `equivalent` within ±δ, or
//! `undecided` with the repeats a decision would need at the noise seen.
//!
//! Why this shape:
//! - The change is estimated on the log scale (the ratio of geometric
//!   means, test over base): a slowdown of 5% and a speed-up of 5% are the
//!   same distance from "no change", and runs whose figures scale with
//!   the machine's speed have a spread proportional to their mean.
//! - Repeats are added until the comparison is decided, and each look at the
//!   data is a chance of a false call: re-running a t-test after every
//!   repeat at 5% gives a false `regressed` or `improved` in a quarter of
//!   A/A comparisons over 28 looks (the unit test below measures it).
//!   Looks come at a fixed schedule (`looks`) and every look uses one
//!   nominal level, calibrated by simulation so that the chance of any
//!   false call over all the schedule's looks is `alpha` (a Pocock
//!   boundary for Welch's t; `nominal_alpha`). Stopping early, on any
//!   other metric's decision, only removes looks, so it keeps the bound.
//! - Equivalence is two one-sided tests: the look's interval inside ±δ.
//!   A true change of exactly δ is called equivalent in at most `alpha`/2
//!   of comparisons, by the same boundary.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The overall chance of a false `regressed` or `improved` per metric.
pub const ALPHA: f64 = 0.05;

/// What a comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Call {
    /// Worse than the baseline, beyond the noise (the interval excludes no change).
    Regressed,
    /// Better than the baseline, beyond the noise.
    Improved,
    /// Within ±δ of the baseline: the whole interval lies inside it.
    Equivalent,
    /// Neither yet: more repeats would tell.
    Undecided,
}

impl Call {
    pub fn name(self) -> &'static str {
        match self {
            Call::Regressed => "regressed",
            Call::Improved => "improved",
            Call::Equivalent => "equivalent",
            Call::Undecided => "undecided",
        }
    }

    pub fn decided(self) -> bool {
        self != Call::Undecided
    }
}

/// One metric's decision at one look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub call: Call,
    /// Relative change of the test arm against the base (0.05: 5% higher).
    pub change: f64,
    /// The interval of `change` at the look's nominal level.
    pub lo: f64,
    pub hi: f64,
    /// The two-sided nominal level the interval was drawn at (`nominal_alpha`).
    pub nominal: f64,
    /// Undecided: about how many more repeats per growing arm would decide
    /// it at the noise seen (None: no number of repeats would, or unknown).
    pub more: Option<u32>,
}

/// The repeats at which a run of `min..=max` repeats looks at its data:
/// `min`, then about a quarter more each time, and `max`. Fewer looks
/// than one per repeat keep the calibrated level higher (more power per
/// repeat) while wasting at most a quarter of the repeats.
pub fn looks(min: u32, max: u32) -> Vec<u32> {
    let min = min.max(2);
    let max = max.max(min);
    let mut v = vec![min];
    let mut n = min;
    while n < max {
        n = ((n as f64 * 1.25).ceil() as u32).max(n + 1).min(max);
        v.push(n);
    }
    v
}

/// Welch's t of `a` and `b` (means, sample variances, sizes): (t, df).
/// None without spread, or with fewer than two values on a side.
fn welch(ma: f64, va: f64, na: usize, mb: f64, vb: f64, nb: usize) -> Option<(f64, f64)> {
    if na < 2 || nb < 2 {
        return None;
    }
    let (sa, sb) = (va / na as f64, vb / nb as f64);
    let se2 = sa + sb;
    if se2 <= 0.0 {
        return None;
    }
    let df = se2.powi(2) / (sa.powi(2) / (na - 1) as f64 + sb.powi(2) / (nb - 1) as f64);
    Some(((mb - ma) / se2.sqrt(), df))
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = if xs.len() < 2 {
        0.0
    } else {
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    };
    (m, v)
}

/// Simulated comparisons per calibration: the nominal level's own
/// sampling error is then about ±0.0015 at 0.05.
const SIMULATIONS: usize = 20_000;

/// The nominal two-sided level every look of `looks` (the (base, test)
/// repeats at each look, growing) must use so that over all of them the
/// chance of a false call is `alpha`, for normal noise: the `alpha`
/// quantile of the smallest p-value over the looks of simulated A/A
/// comparisons (fixed seed: the same schedule always gets the same level).
/// One look needs no correction.
pub fn nominal_alpha(looks: &[(usize, usize)], alpha: f64) -> f64 {
    if looks.len() <= 1 {
        return alpha;
    }
    // a report builds its comparison more than once (text, HTML, CSV):
    // the simulation (about 50 ms) runs once per schedule
    type Cache = Vec<(Vec<(usize, usize)>, u64, f64)>;
    static CACHE: std::sync::Mutex<Cache> = std::sync::Mutex::new(Vec::new());
    let key = (looks.to_vec(), alpha.to_bits());
    if let Some(hit) = CACHE
        .lock()
        .ok()
        .and_then(|c| c.iter().find(|e| (&e.0, e.1) == (&key.0, key.1)).map(|e| e.2))
    {
        return hit;
    }
    let level = simulate(looks, alpha);
    if let Ok(mut c) = CACHE.lock() {
        c.push((key.0, key.1, level));
    }
    level
}

/// `nominal_alpha`'s simulation.
fn simulate(looks: &[(usize, usize)], alpha: f64) -> f64 {
    let (na, nb) = *looks.last().expect("looks");
    let mut rng = fastrand::Rng::with_seed(0x5eed_dec1de);
    let mut normal = move || {
        // Box-Muller: one standard normal value per call
        let u1 = 1.0 - rng.f64();
        let u2 = rng.f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    };
    let (mut a, mut b) = (vec![0.0; na], vec![0.0; nb]);
    let mut mins: Vec<f64> = Vec::with_capacity(SIMULATIONS);
    for _ in 0..SIMULATIONS {
        a.iter_mut().for_each(|x| *x = normal());
        b.iter_mut().for_each(|x| *x = normal());
        let mut min_p: f64 = 1.0;
        for &(ka, kb) in looks {
            let ((ma, va), (mb, vb)) = (mean_var(&a[..ka]), mean_var(&b[..kb]));
            if let Some(p) = welch(ma, va, ka, mb, vb, kb).and_then(|(t, df)| p_two_sided(t, df)) {
                min_p = min_p.min(p);
            }
        }
        mins.push(min_p);
    }
    mins.sort_by(f64::total_cmp);
    mins[((alpha * SIMULATIONS as f64) as usize).min(SIMULATIONS - 1)]
}

fn p_two_sided(t: f64, df: f64) -> Option<f64> {
    let d = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(2.0 * (1.0 - d.cdf(t.abs())))
}

fn t_quantile(p: f64, df: f64) -> Option<f64> {
    Some(StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(p))
}

/// Which arms get more repeats if the comparison goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grows {
    /// Both, one repeat each (a lab run's interleaved arms).
    Both,
    /// Only the test arm (`fslab check` against a stored baseline).
    Test,
}

/// The decision on `test` against `base` at a look with nominal level
/// `nominal`, equivalence margin `delta` (0.02: ±2%), where higher values
/// are better or not. None below two values on a side (no spread, no
/// interval), or when a value is not positive (the log scale needs it;
/// such metrics get no verdict).
pub fn decide(
    base: &[f64],
    test: &[f64],
    higher_is_better: bool,
    nominal: f64,
    delta: f64,
    grows: Grows,
) -> Option<Decision> {
    if base.len() < 2 || test.len() < 2 || base.iter().chain(test).any(|&x| !(x > 0.0 && x.is_finite())) {
        return None;
    }
    let la: Vec<f64> = base.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = test.iter().map(|x| x.ln()).collect();
    let ((ma, va), (mb, vb)) = (mean_var(&la), mean_var(&lb));
    let d = mb - ma;
    let change = d.exp() - 1.0;
    let ld = (1.0 + delta).ln();
    // half-width of the interval on the log scale, and the t it used
    let (half, t) = if va + vb == 0.0 {
        (0.0, None)
    } else {
        let (_, df) = welch(ma, va, la.len(), mb, vb, lb.len())?;
        let t = t_quantile(1.0 - nominal / 2.0, df)?;
        (t * (va / la.len() as f64 + vb / lb.len() as f64).sqrt(), Some(t))
    };
    let (lo, hi) = (d - half, d + half);
    let worse = |x: f64| if higher_is_better { x < 0.0 } else { x > 0.0 };
    let call = if lo > -ld && hi < ld {
        Call::Equivalent
    } else if lo > 0.0 || hi < 0.0 {
        if worse(d) {
            Call::Regressed
        } else {
            Call::Improved
        }
    } else {
        Call::Undecided
    };
    let more = match (call, t) {
        (Call::Undecided, Some(t)) => more_repeats(d, ld, t, (va, la.len()), (vb, lb.len()), grows),
        _ => None,
    };
    Some(Decision {
        call,
        change,
        lo: lo.exp() - 1.0,
        hi: hi.exp() - 1.0,
        nominal,
        more,
    })
}

/// Repeats to add (per growing arm) until the interval, at the noise seen,
/// would be narrow enough to exclude no change (half-width under |d|) or to
/// fit inside ±δ (under δ − |d|), whichever comes first.
fn more_repeats(d: f64, ld: f64, t: f64, (va, na): (f64, usize), (vb, nb): (f64, usize), grows: Grows) -> Option<u32> {
    let targets = [d.abs(), ld - d.abs()];
    let need = targets
        .iter()
        .filter(|&&h| h > 0.0)
        .filter_map(|&h| {
            let w = (h / t).powi(2); // the variance of the difference that decides
            match grows {
                // va/n + vb/n <= w
                Grows::Both => Some(((va + vb) / w).ceil().max(na.max(nb) as f64) - na.max(nb) as f64),
                // va/na + vb/n <= w
                Grows::Test => {
                    let room = w - va / na as f64;
                    (room > 0.0).then(|| (vb / room).ceil().max(nb as f64) - nb as f64)
                }
            }
        })
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))))?;
    Some(need.clamp(1.0, 1_000_000.0) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normal(rng: &mut fastrand::Rng) -> f64 {
        let u1 = 1.0 - rng.f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos()
    }

    /// Runs one sequential comparison over `looks` of arms with mean 1 and
    /// 1 + effect (relative) and a relative spread `cv`: the final call and
    /// the repeats per side it took.
    fn sequential(
        rng: &mut fastrand::Rng,
        looks: &[u32],
        effect: f64,
        cv: f64,
        delta: f64,
        nominal: f64,
    ) -> (Call, u32) {
        let max = *looks.last().unwrap() as usize;
        let a: Vec<f64> = (0..max).map(|_| 100.0 * (1.0 + cv * normal(rng))).collect();
        let b: Vec<f64> = (0..max)
            .map(|_| 100.0 * (1.0 + effect) * (1.0 + cv * normal(rng)))
            .collect();
        let mut last = Call::Undecided;
        for &n in looks {
            let n = n as usize;
            last = decide(&a[..n], &b[..n], true, nominal, delta, Grows::Both)
                .unwrap()
                .call;
            if last.decided() {
                return (last, n as u32);
            }
        }
        (last, max as u32)
    }

    fn schedule(looks: &[u32]) -> Vec<(usize, usize)> {
        looks.iter().map(|&n| (n as usize, n as usize)).collect()
    }

    #[test]
    fn looks_grow_by_a_quarter_and_end_at_max() {
        assert_eq!(looks(3, 30), [3, 4, 5, 7, 9, 12, 15, 19, 24, 30]);
        assert_eq!(looks(5, 5), [5]);
        assert_eq!(looks(3, 12), [3, 4, 5, 7, 9, 12]);
    }

    #[test]
    fn one_look_needs_no_correction_and_many_need_a_stricter_level() {
        assert_eq!(nominal_alpha(&[(5, 5)], 0.05), 0.05);
        let a = nominal_alpha(&schedule(&looks(3, 30)), 0.05);
        // Pocock's constant for 10 equally spaced looks is 0.0106 (z = 2.555);
        // Welch's t with few repeats needs about as strict a level
        assert!((0.006..0.02).contains(&a), "{a}");
    }

    /// A/A comparisons on simulated noise: the sequential procedure calls
    /// at most 5% of them regressed or improved, where re-testing at 5%
    /// after every repeat calls far more.
    #[test]
    fn identical_arms_are_called_different_at_most_alpha_of_the_time() {
        let lk = looks(3, 30);
        let nominal = nominal_alpha(&schedule(&lk), ALPHA);
        let mut rng = fastrand::Rng::with_seed(7);
        let trials = 2000;
        let false_calls = (0..trials)
            .filter(|_| {
                matches!(
                    sequential(&mut rng, &lk, 0.0, 0.03, 0.02, nominal).0,
                    Call::Regressed | Call::Improved
                )
            })
            .count();
        assert!(false_calls as f64 <= 0.05 * trials as f64, "{false_calls} of {trials}");
        // the naive way: a t-test at 5% after every repeat from 3 to 30
        let every: Vec<u32> = (3..=30).collect();
        let naive = (0..trials)
            .filter(|_| {
                matches!(
                    sequential(&mut rng, &every, 0.0, 0.03, 0.0, 0.05).0,
                    Call::Regressed | Call::Improved
                )
            })
            .count();
        eprintln!("A/A: sequential {false_calls}, naive {naive} of {trials}");
        assert!(naive as f64 > 0.15 * trials as f64, "naive: {naive} of {trials}");
    }

    /// A 5% slowdown at 2% noise per run is called regressed in at least
    /// 90% of comparisons within 12 repeats per side, its interval holding 5%.
    #[test]
    fn a_five_percent_slowdown_is_found_within_twelve_repeats() {
        let lk = looks(3, 12);
        let nominal = nominal_alpha(&schedule(&lk), ALPHA);
        let mut rng = fastrand::Rng::with_seed(11);
        let trials = 1000;
        let found = (0..trials)
            .filter(|_| sequential(&mut rng, &lk, -0.05, 0.02, 0.02, nominal).0 == Call::Regressed)
            .count();
        eprintln!("5% slowdown: {found} of {trials} regressed within 12");
        assert!(found as f64 >= 0.9 * trials as f64, "{found} of {trials}");
    }

    #[test]
    fn a_decision_reports_the_change_and_its_interval() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0];
        let test = [90.0, 91.0, 89.0, 90.5, 89.5];
        let d = decide(&base, &test, true, 0.05, 0.02, Grows::Both).unwrap();
        assert_eq!(d.call, Call::Regressed);
        assert!((d.change + 0.10).abs() < 0.005, "{d:?}");
        assert!(d.lo < d.change && d.change < d.hi && d.hi < 0.0, "{d:?}");
        // lower is better: the same change is an improvement
        assert_eq!(
            decide(&base, &test, false, 0.05, 0.02, Grows::Both).unwrap().call,
            Call::Improved
        );
        // identical tight arms: equivalent within 2%
        let tight = [100.0, 100.5, 99.5, 100.2, 99.8];
        let same = decide(&tight, &tight, true, 0.05, 0.02, Grows::Both).unwrap();
        assert_eq!(same.call, Call::Equivalent, "{same:?}");
        // too few to tell: undecided, with a number of repeats that would
        let noisy = decide(
            &[100.0, 120.0, 85.0],
            &[97.0, 118.0, 80.0],
            true,
            0.05,
            0.02,
            Grows::Both,
        )
        .unwrap();
        assert_eq!(noisy.call, Call::Undecided);
        assert!(noisy.more.is_some_and(|m| m > 3), "{noisy:?}");
        // no verdict on the log scale for a zero, nor from one value
        assert!(decide(&[0.0, 1.0], &[1.0, 1.0], true, 0.05, 0.02, Grows::Both).is_none());
        assert!(decide(&[1.0], &[1.0, 1.0], true, 0.05, 0.02, Grows::Both).is_none());
    }

    #[test]
    fn a_fixed_baseline_that_is_too_noisy_cannot_be_outgrown() {
        // base spread so wide that no number of test repeats narrows the
        // interval enough for an equivalence within 1%
        let d = decide(
            &[80.0, 120.0, 100.0],
            &[100.0, 101.0, 99.0],
            true,
            0.05,
            0.01,
            Grows::Test,
        )
        .unwrap();
        assert_eq!((d.call, d.more), (Call::Undecided, None), "{d:?}");
    }
}
