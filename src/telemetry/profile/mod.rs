//! The CPU profile (`--profile`): fslab's own threads sampled with kernel
//! stacks during each timed phase.
//!
//! [`Profiler::start`] opens one `cpu-clock` sampling event per online CPU
//! for fslab's process with `inherit` (`perf.rs`), so the worker threads a
//! phase starts afterwards are sampled into the same ring buffers. A reader
//! thread, started before any event exists (so it is not sampled itself),
//! drains the buffers every few milliseconds and counts identical raw
//! callchains. [`Profiler::stop`] disables the events, drains the rest and
//! closes them; [`Profiler::phase`] names every address (`symbols.rs`) and
//! folds the stacks (`fold.rs`) into a `model::system::PhaseProfile`.

pub mod fold;
mod perf;
pub mod symbols;

use crate::model::system::{FoldedStack, PhaseProfile};
use fold::Stacks;
use perf::{Record, Ring, PERF_CONTEXT_KERNEL, PERF_CONTEXT_MAX, PERF_CONTEXT_USER};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use symbols::{KernelSymbols, UserSymbols};

/// Top symbols kept per phase: the most inclusive ones, and the hottest
/// by self share.
pub const TOP_SYMBOLS: usize = 25;
pub const TOP_SELF: usize = 10;
/// Folded stacks kept per phase in the result (the file has all of them).
pub const MAX_STACKS: usize = 2000;
/// Ring buffer per CPU, in pages (a power of two): 1 MiB, a second of
/// samples at 999 Hz with deep stacks.
const RING_PAGES: usize = 256;

/// How often the reader empties the buffers: a quarter of the time a
/// buffer takes to fill with 512-byte samples at `hz` (200 ms at 999 Hz,
/// 5 ms at 100 kHz); fewer wake-ups cost fslab less.
fn drain_every(hz: u32) -> Duration {
    let bytes = (RING_PAGES * 4096) as f64;
    let fill_s = bytes / (hz.max(1) as f64 * 512.0);
    Duration::from_secs_f64((fill_s / 4.0).clamp(0.005, 0.2))
}

/// Why profiling cannot run; `flag` is the option to blame.
#[derive(Debug)]
pub struct ProfileError {
    pub flag: &'static str,
    pub msg: String,
}

const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";
const MAX_RATE: &str = "/proc/sys/kernel/perf_event_max_sample_rate";

fn read_sysctl(p: &str) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// Samples of one phase, as the kernel wrote them.
#[derive(Debug, Default)]
pub struct RawPhase {
    pub samples: u64,
    pub lost: u64,
    /// Raw callchains (leaf first, with context markers) and their counts.
    chains: HashMap<Vec<u64>, u64>,
    tids: HashSet<u32>,
    /// CPU time the reader thread spent on this phase, ns.
    pub reader_cpu_ns: u64,
}

impl RawPhase {
    fn take(&mut self, r: Record<'_>) {
        match r {
            Record::Lost(n) => self.lost += n,
            Record::Sample {
                cpumode,
                ip,
                tid,
                chain,
            } => {
                self.samples += 1;
                self.tids.insert(tid);
                if chain.is_empty() {
                    let marker = if cpumode == perf::PERF_RECORD_MISC_KERNEL {
                        PERF_CONTEXT_KERNEL
                    } else {
                        PERF_CONTEXT_USER
                    };
                    *self.chains.entry(vec![marker, ip]).or_default() += 1;
                } else if let Some(n) = self.chains.get_mut(chain) {
                    *n += 1;
                } else {
                    self.chains.insert(chain.to_vec(), 1);
                }
            }
        }
    }

    /// Threads sampled.
    pub fn threads(&self) -> usize {
        self.tids.len()
    }
}

#[derive(Default)]
struct State {
    rings: Vec<Ring>,
    raw: RawPhase,
    active: bool,
    quit: bool,
    /// The reader's thread CPU time at the start of the phase and now.
    reader_start_ns: u64,
    reader_now_ns: u64,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// CPU time of the whole process (every thread), ns.
pub fn process_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// CPU time of the calling thread, ns.
pub fn own_cpu_ns() -> u64 {
    thread_cpu_ns()
}

fn reader(shared: Arc<Shared>, every: Duration) {
    let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if st.quit {
            return;
        }
        if st.active {
            let State { rings, raw, .. } = &mut *st;
            for r in rings.iter_mut() {
                r.drain(&mut |rec| raw.take(rec));
            }
            st.reader_now_ns = thread_cpu_ns();
            st = shared.wake.wait_timeout(st, every).unwrap_or_else(|e| e.into_inner()).0;
        } else {
            st = shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The profiler of this process: sampling between [`Profiler::start`] and
/// [`Profiler::stop`], one phase at a time.
pub struct Profiler {
    hz: u32,
    shared: Arc<Shared>,
    reader: Option<std::thread::JoinHandle<()>>,
    kernel: KernelSymbols,
    user: Mutex<UserSymbols>,
    /// Said once per process in every profile ("kernel symbols hidden").
    pub notes: Vec<String>,
}

impl Profiler {
    /// Checks that the kernel lets this process sample itself with kernel
    /// stacks at `hz` (one event opened, mapped and closed), loads the
    /// kernel's symbols and starts the reader thread.
    pub fn new(hz: u32) -> Result<Profiler, ProfileError> {
        let cpu = perf::online_cpus()[0];
        if let Err(e) = Ring::open(0, cpu, hz as u64, 1) {
            return Err(explain(&e, hz));
        }
        let mut notes = Vec::new();
        let kernel = KernelSymbols::load();
        if kernel.is_empty() {
            notes.push(format!(
                "kernel symbols hidden: /proc/kallsyms shows no addresses (kernel.kptr_restrict is {}); kernel frames are unnamed",
                read_sysctl("/proc/sys/kernel/kptr_restrict").unwrap_or_else(|| "?".into())
            ));
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let s2 = shared.clone();
        let reader = std::thread::Builder::new()
            .name("fslab-profile".into())
            .spawn(move || reader(s2, drain_every(hz)))
            .map_err(|e| ProfileError {
                flag: "--profile",
                msg: format!("cannot start the profile reader thread: {e}"),
            })?;
        Ok(Profiler {
            hz,
            shared,
            reader: Some(reader),
            kernel,
            user: Mutex::new(UserSymbols::default()),
            notes,
        })
    }

    pub fn hz(&self) -> u32 {
        self.hz
    }

    /// Opens the events on every online CPU and starts sampling. Threads
    /// fslab starts from now on are sampled too.
    pub fn start(&self) -> Result<(), String> {
        let pid = std::process::id() as i32;
        let mut rings = Vec::new();
        for cpu in perf::online_cpus() {
            // a smaller buffer when the locked-memory limit refuses the big one
            let mut pages = RING_PAGES;
            let ring = loop {
                match Ring::open(pid, cpu, self.hz as u64, pages) {
                    Ok(r) => break r,
                    Err(e) if e.step != "perf_event_open" && pages > 8 => pages /= 4,
                    // the kernel may have lowered its sample-rate limit since the probe
                    Err(e) => return Err(format!("cpu {cpu}: {}", explain(&e, self.hz).msg)),
                }
            };
            rings.push(ring);
        }
        for r in &rings {
            r.enable().map_err(|e| format!("enabling the perf event: {e}"))?;
        }
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        st.rings = rings;
        st.raw = RawPhase::default();
        st.active = true;
        st.reader_start_ns = st.reader_now_ns;
        drop(st);
        self.shared.wake.notify_all();
        Ok(())
    }

    /// Stops sampling, drains what is left and closes the events.
    pub fn stop(&self) -> RawPhase {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if !st.active {
            return RawPhase::default();
        }
        for r in &st.rings {
            let _ = r.disable();
        }
        let State { rings, raw, .. } = &mut *st;
        for r in rings.iter_mut() {
            r.drain(&mut |rec| raw.take(rec));
        }
        st.rings.clear();
        st.active = false;
        let mut raw = std::mem::take(&mut st.raw);
        raw.reader_cpu_ns = st.reader_now_ns.saturating_sub(st.reader_start_ns);
        raw
    }

    /// Names every frame of `raw` and folds its stacks: the phase's profile,
    /// and every folded stack (for the file; the profile keeps the
    /// [`MAX_STACKS`] heaviest).
    pub fn phase(&self, name: &str, raw: &RawPhase) -> (PhaseProfile, Vec<FoldedStack>) {
        let mut user = self.user.lock().unwrap_or_else(|e| e.into_inner());
        user.refresh();
        let stacks = fold_chains(raw, &self.kernel, &mut user);
        let all = stacks.folded();
        let p = PhaseProfile {
            name: name.to_string(),
            samples: raw.samples,
            lost: raw.lost,
            top: stacks.top(TOP_SYMBOLS, TOP_SELF),
            stacks: all.iter().take(MAX_STACKS).cloned().collect(),
        };
        (p, all)
    }
}

impl Drop for Profiler {
    fn drop(&mut self) {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).quit = true;
        self.shared.wake.notify_all();
        if let Some(h) = self.reader.take() {
            let _ = h.join();
        }
    }
}

/// The refusal of the probe event, explained.
fn explain(e: &perf::OpenError, hz: u32) -> ProfileError {
    let errno = e.err.raw_os_error().unwrap_or(0);
    let paranoid = read_sysctl(PARANOID);
    if errno == libc::EACCES || errno == libc::EPERM {
        return ProfileError {
            flag: "--profile",
            msg: format!(
                "the kernel forbids perf_event_open ({}): {PARANOID} is {}; sampling kernel stacks needs root (CAP_PERFMON) or a value of 1 or lower",
                crate::errno::errno_name(errno),
                paranoid.as_deref().unwrap_or("unreadable")
            ),
        };
    }
    if errno == libc::EINVAL {
        if let Some(max) = read_sysctl(MAX_RATE).and_then(|m| m.parse::<u64>().ok()) {
            if hz as u64 > max {
                return ProfileError {
                    flag: "--profile-hz",
                    msg: format!("{hz} Hz is above the kernel's limit: {MAX_RATE} is {max}"),
                };
            }
        }
    }
    if errno == libc::ENOENT || errno == libc::ENOSYS || paranoid.is_none() {
        return ProfileError {
            flag: "--profile",
            msg: format!("this kernel has no perf events (no {PARANOID}): {e}"),
        };
    }
    ProfileError {
        flag: "--profile",
        msg: format!("cannot sample fslab's CPU: {e}"),
    }
}

/// Raw callchains to named, root-first stacks.
fn fold_chains(raw: &RawPhase, kernel: &KernelSymbols, user: &mut UserSymbols) -> Stacks {
    let mut s = Stacks::default();
    let mut kcache: HashMap<u64, u32> = HashMap::new();
    let mut ucache: HashMap<u64, Option<u32>> = HashMap::new();
    for (chain, &count) in &raw.chains {
        let mut kframes: Vec<u32> = Vec::new();
        let mut uframes: Vec<u32> = Vec::new();
        let mut ctx = 0u64;
        // the first address after a marker is where the CPU was (exact);
        // the others are return addresses: the call is one byte before
        let mut first = false;
        let mut user_done = false;
        for &a in chain {
            if a >= PERF_CONTEXT_MAX {
                ctx = a;
                first = true;
                continue;
            }
            let look = if first { a } else { a.wrapping_sub(1) };
            first = false;
            match ctx {
                PERF_CONTEXT_KERNEL => {
                    let id = *kcache.entry(look).or_insert_with(|| {
                        let n = kernel.lookup(look).unwrap_or("[kernel]");
                        s.frame(n, true)
                    });
                    kframes.push(id);
                }
                PERF_CONTEXT_USER if !user_done => {
                    let id = *ucache
                        .entry(look)
                        .or_insert_with(|| user.lookup(look).map(|n| s.frame(&n, false)));
                    match id {
                        Some(id) => uframes.push(id),
                        // a frame-pointer walk gone astray: the rest is not a stack
                        None if !uframes.is_empty() => user_done = true,
                        None => {
                            uframes.push(s.frame("[unknown]", false));
                            user_done = true;
                        }
                    }
                }
                _ => {}
            }
        }
        let ids: Vec<u32> = uframes.into_iter().rev().chain(kframes.into_iter().rev()).collect();
        s.add(ids, count);
    }
    s
}

/// The folded-stacks file's name for a cell: its name with every character
/// outside `[A-Za-z0-9._-]` made `_`.
pub fn folded_file_name(cell: &str, rank: Option<usize>) -> String {
    let mut n: String = cell
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    n = n.trim_matches('.').to_string();
    if n.is_empty() {
        n = "cell".into();
    }
    if let Some(r) = rank {
        n.push_str(&format!(".rank{r}"));
    }
    format!("fslab-profile-{n}.folded")
}

/// Writes `lines` ("phase;a;b;c count") to `dir/name`, atomically; never
/// through a symbolic link nor over anything but a regular file.
pub fn write_folded(dir: &Path, name: &str, text: &str) -> Result<PathBuf, String> {
    let p = dir.join(name);
    match std::fs::symlink_metadata(&p) {
        Ok(m) if !m.file_type().is_file() => {
            return Err(format!(
                "{} exists and is not a regular file: not overwritten",
                p.display()
            ));
        }
        Ok(_) | Err(_) => {}
    }
    // a plan or job file named like a profile in the profile dir stays
    if let Some(i) = crate::plan::input_at(&p) {
        return Err(format!("{} is the input {}: not overwritten", p.display(), i.display()));
    }
    crate::plan::write_atomically(&p, text.as_bytes()).map_err(|e| e.to_string())?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_wakes_less_often_at_low_frequencies() {
        assert_eq!(drain_every(999), Duration::from_millis(200));
        assert!(drain_every(100_000) < Duration::from_millis(6));
        assert!(drain_every(10_000) < Duration::from_millis(200));
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(folded_file_name("meta", None), "fslab-profile-meta.folded");
        assert_eq!(
            folded_file_name("ext4/create 1", Some(2)),
            "fslab-profile-ext4_create_1.rank2.folded"
        );
        assert_eq!(folded_file_name("../..", None), "fslab-profile-_.folded");
        assert_eq!(folded_file_name("", None), "fslab-profile-cell.folded");
    }

    #[test]
    fn symlinks_and_special_files_are_not_overwritten() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real");
        std::fs::write(&real, "keep").unwrap();
        std::os::unix::fs::symlink(&real, d.path().join("link")).unwrap();
        assert!(write_folded(d.path(), "link", "x 1\n").is_err());
        std::fs::create_dir(d.path().join("dir")).unwrap();
        assert!(write_folded(d.path(), "dir", "x 1\n").is_err());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep");
        let p = write_folded(d.path(), "new", "a;b 1\n").unwrap();
        assert_eq!(std::fs::read_to_string(p).unwrap(), "a;b 1\n");
    }

    #[test]
    fn raw_chains_fold_root_first_with_kernel_under_user() {
        let kernel = KernelSymbols::parse(
            "ffffffff81000000 T entry_SYSCALL_64\nffffffff81001000 T do_syscall_64\nffffffffc0000000 t xfs_attr_set\t[xfs]\n",
        );
        let mut user = UserSymbols::default();
        user.refresh();
        let me = raw_chains_fold_root_first_with_kernel_under_user as *const () as u64;
        let mut raw = RawPhase::default();
        // a sample in xfs_attr_set (exact IP), called from do_syscall_64 and
        // the entry (return addresses), from this test's function; then a
        // user-space sample, and a user walk that goes astray after one frame
        let chain = vec![
            PERF_CONTEXT_KERNEL,
            0xffffffffc0000010,
            0xffffffff81001001,
            0xffffffff81000001,
            PERF_CONTEXT_USER,
            me + 4,
            8,
            me + 8,
        ];
        for _ in 0..3 {
            raw.take(Record::Sample {
                cpumode: perf::PERF_RECORD_MISC_KERNEL,
                ip: 0xffffffffc0000010,
                tid: 7,
                chain: &chain,
            });
        }
        raw.take(Record::Sample {
            cpumode: perf::PERF_RECORD_MISC_USER,
            ip: me,
            tid: 8,
            chain: &[],
        });
        raw.take(Record::Lost(5));
        assert_eq!((raw.samples, raw.lost, raw.threads()), (4, 5, 2));
        let s = fold_chains(&raw, &kernel, &mut user);
        let f = s.folded();
        let me_name = user.lookup(me).unwrap();
        assert!(
            me_name.ends_with("raw_chains_fold_root_first_with_kernel_under_user"),
            "{me_name}"
        );
        assert_eq!(f.len(), 2);
        assert_eq!(
            f[0].stack,
            format!("{me_name};entry_SYSCALL_64_[k];do_syscall_64_[k];xfs_attr_set_[k]")
        );
        assert_eq!(f[0].count, 3);
        assert_eq!(f[1].stack, me_name);
        let top = s.top(3, 0);
        assert_eq!(top[0].symbol, me_name);
        assert_eq!(top[0].total_pct, 100.0);
        assert_eq!(top[0].self_pct, 25.0);
    }
}
