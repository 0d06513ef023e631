//! A verdict on every cell: what bounded its measurement, and named flags
//! for what makes its figures suspect, each with its evidence. Derived from
//! what fslab already measured (`telemetry::verdict`); a reader decides in
//! seconds whether a figure measured what its setup claims.

use serde::{Deserialize, Serialize};

/// What bounded a cell's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    /// The device under the filesystem was busy for most of the cell.
    Device,
    /// The operations were served from memory: little of fslab's data
    /// reached the device.
    PageCache,
    /// The kernel's or filesystem's CPU path: fslab's threads spent their
    /// CPU in the kernel, or the machine's CPUs were saturated.
    Cpu,
    /// fslab's own CPU: its threads spent their time in fslab's code.
    Tool,
    /// Other processes or the hypervisor disturbed the cell: its figures
    /// carry their noise.
    Noise,
    /// Not enough was measured to say (no telemetry, no operations).
    Unknown,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Device => "device",
            Bound::PageCache => "page-cache",
            Bound::Cpu => "cpu",
            Bound::Tool => "tool",
            Bound::Noise => "noise",
            Bound::Unknown => "unknown",
        }
    }
}

/// A named reason to doubt a cell's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FlagKind {
    /// Buffered writes far faster than the device wrote: the page cache
    /// absorbed them.
    PageCache,
    /// A cell named as a cache test whose reads came from the device.
    ColdCache,
    /// fsync or fdatasync while no device under the filesystem received a
    /// flush: a disabled barrier, a volatile cache, or an image on tmpfs.
    NoFlush,
    /// The timed span was too short for a stable figure.
    TooShort,
    /// The run covered its working set many times over: a working set that
    /// small stays in the device's and the host's caches.
    SmallWorkingSet,
    /// The cell ended before its runtime.
    StoppedEarly,
    /// Other processes or the hypervisor took CPU or moved data on its devices.
    Disturbed,
    /// A cell without writes during which the device wrote: earlier work
    /// (a previous phase's files or deletes) was being flushed.
    ForeignWriteback,
    /// O_DIRECT was asked for and not honoured (tmpfs).
    DirectNotHonoured,
}

impl FlagKind {
    pub fn name(self) -> &'static str {
        match self {
            FlagKind::PageCache => "page-cache",
            FlagKind::ColdCache => "cold-cache",
            FlagKind::NoFlush => "no-flush",
            FlagKind::TooShort => "too-short",
            FlagKind::SmallWorkingSet => "small-working-set",
            FlagKind::StoppedEarly => "stopped-early",
            FlagKind::Disturbed => "disturbed",
            FlagKind::ForeignWriteback => "foreign-writeback",
            FlagKind::DirectNotHonoured => "direct-not-honoured",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Flag {
    pub kind: FlagKind,
    /// The figures that raised it, in words.
    pub evidence: String,
}

/// `cell.verdict`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    pub bound: Bound,
    /// Why that bound, in words, with the figures.
    pub evidence: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<Flag>,
}

impl Verdict {
    pub fn has(&self, kind: FlagKind) -> bool {
        self.flags.iter().any(|f| f.kind == kind)
    }

    /// "device-bound (loop3 busy 97%)": the bound without the flags.
    pub fn bound_line(&self) -> String {
        if self.bound == Bound::Unknown {
            format!("bound unknown ({})", self.evidence)
        } else {
            format!("{}-bound ({})", self.bound.name(), self.evidence)
        }
    }

    /// "device-bound (loop3 busy 97%); too-short: ...; disturbed: ..."
    pub fn line(&self) -> String {
        let mut s = self.bound_line();
        for f in &self.flags {
            // a noise bound's evidence is the disturbance: said once
            if self.bound == Bound::Noise && f.kind == FlagKind::Disturbed {
                continue;
            }
            s.push_str(&format!("; {}: {}", f.kind.name(), f.evidence));
        }
        s
    }
}
