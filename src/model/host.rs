//! The machine a result came from: kernel, CPU, cores, memory.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostInfo {
    pub hostname: String,
    /// `uname -r` and `uname -v`.
    pub kernel: String,
    pub kernel_version: String,
    pub arch: String,
    pub cpu_model: String,
    pub cores: usize,
    pub memory_bytes: u64,
}

impl HostInfo {
    pub fn read() -> Self {
        let u = rustix::system::uname();
        let s = |c: &std::ffi::CStr| c.to_string_lossy().into_owned();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        HostInfo {
            hostname: s(u.nodename()),
            kernel: s(u.release()),
            kernel_version: s(u.version()),
            arch: s(u.machine()),
            cpu_model: cpuinfo
                .lines()
                .find_map(|l| {
                    l.strip_prefix("model name")
                        .and_then(|r| r.split_once(':'))
                        .map(|(_, v)| v.trim().to_string())
                })
                .unwrap_or_default(),
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            memory_bytes: meminfo
                .lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map(|kb| kb * 1024)
                .unwrap_or(0),
        }
    }
}

/// The kernel a lab cell ran under (plans with `kernels` or `--kernel`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct KernelTag {
    /// The kernel's name in the plan ("6.1", "host").
    pub name: String,
    /// `uname -r` of the kernel that ran the cell (the guest's, in a VM).
    pub release: String,
    /// `uname -v` of that kernel.
    pub version: String,
    /// How its virtual machine ran; None: the host's own kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<VmInfo>,
}

/// A guest cell's virtual machine, and what booting it cost.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct VmInfo {
    /// The kernel image booted.
    pub image: String,
    /// "kvm" or "tcg".
    pub accel: String,
    /// Why this accelerator: the plan's choice or the probe boot's outcome.
    pub accel_reason: String,
    /// Under TCG every instruction is emulated: timings say what works, not how fast.
    pub emulated: bool,
    pub cpus: u32,
    pub memory_bytes: u64,
    /// How the guest's disk is attached ("virtio-blk, cache=none, raw image file").
    pub disk: String,
    /// `qemu-system-x86_64 --version`, first line.
    pub qemu: String,
    /// What this cell cost the run: from QEMU's start (the boot's first
    /// cell) or the previous cell's result (the others) to this cell's
    /// result on the host.
    pub boot_to_result_ns: u64,
    /// The part of it outside the cell's own elapsed time: the boot and
    /// module loading (the boot's first cell only), discarding the disk,
    /// mkfs, mount, laying out files.
    pub overhead_ns: u64,
    /// The guest kernel's own boot ID (`/proc/sys/kernel/random/boot_id`):
    /// cells with the same one ran in one boot of one VM.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub boot_id: String,
    /// From QEMU's start to the guest starting its first cell (kernel,
    /// init, modules, disks): paid once per boot, by all of `boot_cells`.
    #[serde(default)]
    pub boot_ns: u64,
    /// The cells that shared this boot, in the order the guest ran them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boot_cells: Vec<String>,
    /// This cell's place among `boot_cells` (1: the first).
    #[serde(default)]
    pub boot_place: u32,
    /// The machine as the guest saw it.
    pub guest: HostInfo,
}
