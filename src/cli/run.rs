//! `fslab run`: the main job's flags (a plan file or the quick suite) and
//! its help examples.

use clap::Args;

use super::common::{CommonArgs, SAFETY, TARGET, WORKLOAD};
use super::words::{self, Word};

pub(super) const RUN_EXAMPLES: &str = "\
Examples:
  # the quick suite in the current directory (about a minute)
  fslab run

  # the quick suite on another filesystem, results as JSON too
  fslab run --target /mnt/xfs --output json:quick.json

  # the quick suite on a fresh ext4 and a fresh XFS, compared
  # (root: loop devices, mkfs, mount)
  fslab run --scratch ext4,xfs

  # a plan file (docs/plans.md): filesystems x workloads x repeats,
  # mean ± 95% CI, ratio, significance
  fslab run examples/seed-metadata-xattr.toml --output json:meta.json \\
            --output html:meta.html";

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Plan file (TOML). Without one, the built-in quick suite runs.
    pub plan: Option<String>,
    /// Duration of each cell of the quick suite [default: 5s].
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub runtime: Option<String>,
    /// Repeat every cell N times, or MIN..MAX: from MIN until every
    /// headline comparison is decided (regressed, improved or equivalent),
    /// at most MAX (overrides the plan's repeat).
    #[arg(long, value_name = "N|MIN..MAX", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub repeat: Option<String>,
    /// The smallest change that matters (default 2%; the plan's
    /// repeat.target): a comparison whose interval lies within ±PCT is
    /// called equivalent. (Not --target: that names where the work runs.)
    #[arg(long, value_name = "PCT", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub equivalence: Option<String>,
    /// Run a cell marked disturbed (other processes' CPU, steal, foreign
    /// device I/O) again, up to N more times (overrides the plan's retry-disturbed).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub retry_disturbed: Option<String>,
    /// Run the quick suite on fresh scratch filesystems of these types (a
    /// comma list: image file, loop device, mkfs, mount) and compare them.
    #[arg(long, value_name = "TYPES", value_delimiter = ',', value_parser = Word::<words::ScratchFs>::one(), help_heading = TARGET)]
    pub scratch: Vec<String>,
    /// Where scratch images and mount points go (default /var/tmp, or the plan's scratch-dir).
    #[arg(long, value_name = "DIR", help_heading = TARGET)]
    pub scratch_dir: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Allow a plan to format block devices that are not fslab's own loop devices.
    #[arg(long, help_heading = SAFETY)]
    pub allow_device: bool,
    /// With --allow-device: format a device even though it carries a filesystem or partition table.
    #[arg(long, help_heading = SAFETY)]
    pub force_overwrite: bool,
    /// Run every cell under this kernel: `host` (the running one) or
    /// IMAGE[,modules=DIR][,name=NAME], booted in a QEMU virtual machine with
    /// the cell's scratch image as its disk. Repeatable; replaces the plan's kernels.
    #[arg(long = "kernel", value_name = "KERNEL", help_heading = TARGET)]
    pub kernels: Vec<String>,
    /// Inside a guest: run only this filesystem of the plan, on the VM's disk.
    #[arg(long, hide = true, value_name = "NAME")]
    pub guest_filesystem: Option<String>,
    /// Inside a guest: run only this workload of the plan.
    #[arg(long, hide = true, value_name = "NAME")]
    pub guest_workload: Option<String>,
    /// Inside a guest: the disk of the cell's filesystem (default /dev/vda).
    #[arg(long, hide = true, value_name = "DEVICE")]
    pub guest_disk: Option<String>,
}
