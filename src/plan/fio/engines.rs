//! fio's ioengine names mapped onto fslab's engines, fio's metadata engines
//! (filecreate, filestat, filedelete, dircreate, dirstat, dirdelete) mapped
//! onto fslab's metadata operations, fio's net engine, and the engines
//! fslab refuses (those needing hardware or a network fslab does not drive).

/// One of fio's metadata engines: each file of the job is one operation,
/// timed, its latency fio's clat; the reads (or writes, with rw=write) fio
/// counts are its `bs`-sized fake I/Os over the file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaOp {
    /// open(O_CREAT|O_RDWR, 0600) of a new file (then closed).
    FileCreate,
    /// stat of a laid-out file (`stat_type`: stat, lstat or statx).
    FileStat,
    /// unlink of a laid-out file.
    FileDelete,
    /// mkdir(0700).
    DirCreate,
    /// stat of a directory made before the timed run.
    DirStat,
    /// rmdir of a directory made before the timed run.
    DirDelete,
}

impl MetaOp {
    pub fn from_name(name: &str) -> Option<MetaOp> {
        Some(match name {
            "filecreate" => MetaOp::FileCreate,
            "filestat" => MetaOp::FileStat,
            "filedelete" => MetaOp::FileDelete,
            "dircreate" => MetaOp::DirCreate,
            "dirstat" => MetaOp::DirStat,
            "dirdelete" => MetaOp::DirDelete,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            MetaOp::FileCreate => "filecreate",
            MetaOp::FileStat => "filestat",
            MetaOp::FileDelete => "filedelete",
            MetaOp::DirCreate => "dircreate",
            MetaOp::DirStat => "dirstat",
            MetaOp::DirDelete => "dirdelete",
        }
    }

    /// Whether fio lays the job's files out before the run (the engines
    /// that work on existing files); the others are fio's "diskless" ones.
    pub fn lays_out(self) -> bool {
        matches!(self, MetaOp::FileStat | MetaOp::FileDelete)
    }

    /// Whether the run needs the directories made first (untimed, as
    /// fio's `setup_dirs`).
    pub fn makes_dirs_first(self) -> bool {
        matches!(self, MetaOp::DirStat | MetaOp::DirDelete)
    }
}

/// fio's `stat_type` of filestat and dirstat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StatType {
    #[default]
    Stat,
    Lstat,
    Statx,
}

/// What a job's ioengine does. `Default`: reads and writes (the io workload).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FioEngine {
    /// Reads and writes through fslab's engine (sync, io_uring, null).
    #[default]
    Io,
    /// One of fio's metadata engines. `bytes_per_file`: what fio counts
    /// for each file (its fake I/Os of `bs` each); `write`: counted as
    /// writes (rw=write) rather than reads.
    Meta {
        op: MetaOp,
        stat: StatType,
        bytes_per_file: u64,
        write: bool,
    },
    /// fio's cpuio: burns a CPU at a duty cycle, one counted read of no
    /// bytes per burn.
    Cpu(CpuLoad),
    /// fio's exec: runs a program for the job's runtime.
    Exec(ExecPlan),
    /// fio's net: sends or receives a stream or datagrams over a socket.
    Net(NetPlan),
}

/// fio's net engine (engines/net.c): each operation one send or recv of a
/// block (a TCP stream, or UDP datagrams, unicast or multicast), as fio's
/// sync queue does it: a short transfer is counted (short_ios) and its
/// remainder is the next operation; fio's pingpong answers each block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetPlan {
    pub proto: NetProto,
    /// hostname= (fio keeps it as filename=): the peer a sender or a TCP
    /// reader without listen connects to, or the multicast group a UDP
    /// reader joins.
    pub host: Option<String>,
    /// port=; each clone adds its number, as fio's subjob_number.
    pub port: u16,
    /// The job receives (rw=read), else it sends.
    pub read: bool,
    /// A TCP receiver that accepts (listen); a UDP reader always binds.
    pub listen: bool,
    pub pingpong: bool,
    pub nodelay: bool,
    /// interface=: the multicast interface's address.
    pub interface: Option<std::net::Ipv4Addr>,
    /// ttl= of multicast datagrams (fio's default 1).
    pub ttl: u32,
    /// window_size=: SO_SNDBUF and SO_RCVBUF, bytes.
    pub window_size: Option<u32>,
    /// mss=: TCP_MAXSEG, bytes.
    pub mss: Option<u32>,
    /// The block each operation asks for.
    pub bs: u64,
    /// The bytes to issue (fio's io_size, else size); None: time_based.
    pub bytes: Option<u64>,
    /// A time_based job's runtime.
    pub runtime: Option<std::time::Duration>,
}

/// fio's protocol= of the net engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NetProto {
    #[default]
    Tcp,
    TcpV6,
    Udp,
    UdpV6,
}

impl NetProto {
    pub fn udp(self) -> bool {
        matches!(self, NetProto::Udp | NetProto::UdpV6)
    }

    pub fn v6(self) -> bool {
        matches!(self, NetProto::TcpV6 | NetProto::UdpV6)
    }
}

/// fio's exec engine (engines/exec.c): the job's first operation starts
/// `argv`; each later one sleeps 50 ms and, once the runtime is over,
/// sends the program SIGTERM and waits `grace`; at the end it is killed
/// (SIGKILL). Every operation is a counted read of no bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecPlan {
    /// argv[0] as found (execvp's PATH search), checked before the run.
    pub program: std::path::PathBuf,
    /// fio's argv: `program arguments` after %r (the runtime in whole
    /// seconds) and %n (the job's name), split at each space.
    pub argv: Vec<String>,
    /// grace_time, seconds.
    pub grace_s: u32,
    /// std_redirect: the program's stdout and stderr go to NAME.stdout and
    /// NAME.stderr in the working directory (None: they are fslab's own).
    pub redirect: Option<[std::path::PathBuf; 2]>,
    /// --force-overwrite: the redirect files may replace existing ones.
    pub overwrite: bool,
    /// The job's runtime, after which the program is told to stop.
    pub runtime: std::time::Duration,
}

/// fio's cpuio engine (engines/cpu.c): each operation burns the CPU for
/// `chunk_us` (noop: spinning on the clock; qsort: four qsorts of 256 Ki
/// integers, the burn then being however long they took), then the job
/// sleeps `burn * (100 - load) / load`, so the thread is busy `load`% of
/// the time. fio counts every burn as a read of no bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuLoad {
    /// cpuload: percent, 1-100.
    pub load: u32,
    /// cpuchunks: the burn, in microseconds (fio's default 50000).
    pub chunk_us: u32,
    /// cpumode=qsort (else noop).
    pub qsort: bool,
    /// exit_on_io_done: the job ends once no job doing I/O is running or
    /// yet to run.
    pub exit_on_io_done: bool,
}

/// fio's engines fslab refuses, and why.
pub fn refused(name: &str) -> Option<&'static str> {
    const NET: &str = "it needs a network peer fslab does not drive";
    const HW: &str = "it needs hardware or a kernel interface fslab does not drive";
    const LIB: &str = "it needs a storage system's client library fslab does not have";
    const OS: &str = "it is another operating system's";
    Some(match name {
        "netsplice"
        | "rdma"
        | "http"
        | "nbd"
        | "librpma_apm_client"
        | "librpma_apm_server"
        | "librpma_gpspm_client"
        | "librpma_gpspm_server" => NET,
        "sg" | "io_uring_cmd" | "xnvme" | "libcufile" | "dev-dax" | "libpmem" | "pmemblk" | "mtd" | "libzbc"
        | "spdk" | "libblkio" | "binject" | "bsg" => HW,
        "rbd" | "rados" | "dfs" | "nfs" | "gfapi" | "gfapi_async" | "libhdfs" | "libiscsi" | "ime_psync"
        | "ime_psyncv" | "ime_aio" | "glusterfs" => LIB,
        "windowsaio" | "solarisaio" => OS,
        _ => return None,
    })
}
