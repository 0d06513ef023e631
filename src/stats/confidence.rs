//! Confidence over repeats: the mean of a metric with its 95% confidence
//! interval (Student t, because plans repeat a cell 3 to 10 times, far too few
//! for a normal approximation), and Welch's t-test for "does this filesystem
//! differ from the baseline", which does not assume equal variances (two
//! filesystems rarely have them).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Mean and 95% confidence half-width of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 when n < 2.
    pub sd: f64,
    /// Half-width of the 95% CI: t(0.975, n-1) * sd / sqrt(n); None when n < 2.
    pub ci95: Option<f64>,
}

/// Two-sided Student t quantile for a 95% interval with `df` degrees of freedom.
pub fn t975(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).expect("df > 0").inverse_cdf(0.975)
}

impl Estimate {
    /// The estimate of `xs`; None for an empty sample.
    pub fn of(xs: &[f64]) -> Option<Estimate> {
        let n = xs.len();
        if n == 0 {
            return None;
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Some(Estimate {
                n,
                mean,
                sd: 0.0,
                ci95: None,
            });
        }
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let sd = var.sqrt();
        Some(Estimate {
            n,
            mean,
            sd,
            ci95: Some(t975((n - 1) as f64) * sd / (n as f64).sqrt()),
        })
    }
}

/// Welch's unequal-variances t-test: the two-sided p-value that `a` and `b`
/// have the same mean. None when either side has fewer than two values.
/// Two samples without any spread differ for certain when their means do.
pub fn welch_p(a: &Estimate, b: &Estimate) -> Option<f64> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (a.sd.powi(2) / a.n as f64, b.sd.powi(2) / b.n as f64);
    let se2 = va + vb;
    if se2 == 0.0 {
        return Some(if a.mean == b.mean { 1.0 } else { 0.0 });
    }
    let t = (a.mean - b.mean) / se2.sqrt();
    // Welch–Satterthwaite degrees of freedom.
    let df = se2.powi(2) / (va.powi(2) / (a.n - 1) as f64 + vb.powi(2) / (b.n - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(2.0 * (1.0 - dist.cdf(t.abs())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_tables() {
        // Standard t tables, two-sided 95%.
        assert!(close(t975(1.0), 12.7062, 1e-3));
        assert!(close(t975(2.0), 4.3027, 1e-3));
        assert!(close(t975(9.0), 2.2622, 1e-3));
        assert!(close(t975(30.0), 2.0423, 1e-3));
    }

    #[test]
    fn confidence_interval_of_known_sample() {
        // mean 5, sd = sqrt(2.5), n = 5: half-width t(0.975,4)=2.7764 * 1.5811 / 2.2361
        let e = Estimate::of(&[3.0, 4.0, 5.0, 6.0, 7.0]).unwrap();
        assert_eq!(e.n, 5);
        assert!(close(e.mean, 5.0, 1e-12));
        assert!(close(e.sd, 2.5f64.sqrt(), 1e-12));
        assert!(close(e.ci95.unwrap(), 1.9632, 1e-3), "{e:?}");
        let one = Estimate::of(&[42.0]).unwrap();
        assert_eq!((one.mean, one.ci95), (42.0, None));
        assert!(Estimate::of(&[]).is_none());
    }

    #[test]
    fn welch_against_known_values() {
        // Wikipedia's "Welch's t-test" example 1: t = -2.46, df = 24.99, p = 0.021
        // (p = 0.021378 by numerical integration of the t density).
        let a = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4,
        ];
        let b = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4,
        ];
        let (ea, eb) = (Estimate::of(&a).unwrap(), Estimate::of(&b).unwrap());
        let p = welch_p(&ea, &eb).unwrap();
        assert!(close(p, 0.021378, 1e-4), "p = {p}");
        // Same data: no difference.
        assert!(close(welch_p(&ea, &ea).unwrap(), 1.0, 1e-12));
        // Too few values: no test.
        assert_eq!(welch_p(&Estimate::of(&[1.0]).unwrap(), &ea), None);
        // No spread at all.
        let c = Estimate::of(&[2.0, 2.0]).unwrap();
        let d = Estimate::of(&[3.0, 3.0]).unwrap();
        assert_eq!(welch_p(&c, &d), Some(0.0));
        assert_eq!(welch_p(&c, &c), Some(1.0));
    }
}
