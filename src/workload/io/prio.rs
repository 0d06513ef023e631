//! Each I/O's priority (`plan::io::prio::CmdPrio`), drawn as fio's
//! fio_cmdprio_set_ioprio draws it.

use crate::plan::io::prio::CmdPrio;

/// Draws each I/O's priority as fio's fio_cmdprio_set_ioprio does: a
/// number in 0..100 under the shares of the I/O's direction (and block
/// size) picks the share it falls in; above them, the job's own.
#[derive(Debug, Clone)]
pub struct PrioDraw {
    plan: Option<CmdPrio>,
    rng: fastrand::Rng,
}

impl PrioDraw {
    pub fn new(plan: Option<&CmdPrio>, seed: u64) -> Self {
        PrioDraw {
            plan: plan.cloned(),
            rng: fastrand::Rng::with_seed(seed ^ 0x7A3C_91E5_0D4B_2F61),
        }
    }

    /// The ioprio value of an I/O of `len` bytes (0: none set).
    #[inline]
    pub fn pick(&mut self, read: bool, len: u64) -> u16 {
        let Some(p) = &self.plan else { return 0 };
        let shares = p.dirs[!read as usize].iter().filter(|s| s.bs.is_none_or(|b| b == len));
        let total: u32 = shares.clone().map(|s| s.pct).sum();
        if total == 0 {
            return p.default;
        }
        let r = self.rng.u32(0..100);
        let mut acc = 0;
        for s in shares {
            acc += s.pct;
            if r < acc {
                return s.prio;
            }
        }
        p.default
    }
}
