//! fio's net engine (engines/net.c) as a workload: each step one send or
//! recv of a block, as fio's sync queue does it.
//!
//! - A TCP receiver with `listen` binds and listens when the worker is
//!   built (before the start barrier, so a sender of the same run always
//!   finds it), and accepts in its first steps; a UDP reader binds (and
//!   joins its multicast group) then, and waits for the sender's open
//!   message. Once connected the job's statistics and runtime start again
//!   (`StepMark::Restart`), as fio's reset_all_stats after its accept.
//! - Every wait is cut into 100 ms slices (SO_RCVTIMEO, SO_SNDTIMEO, poll).
//!   Waiting for the peer to connect ends each slice in a `StepMark::Idle`
//!   step, so the runner sees any stop; a transfer's wait stays inside its
//!   operation (timed as fio times it) and is given up on a signal or at a
//!   time_based job's end: the job never hangs on a silent peer.
//! - fio's accounting: each operation adds what it asked for to the bytes
//!   issued, and the job ends once they reach its size; a short transfer
//!   is counted (short_ios) and its remainder is the next operation. With
//!   pingpong each block is answered (a sender then receives it back), and
//!   the answer's length is the operation's.
//! - fio's UDP wire format, so either side can be fio: the open and close
//!   messages (magic 0x6c696e6b; open in network order, close in little
//!   endian, as fio writes them), and the sequence number in each
//!   datagram's last 24 bytes, from which a reader counts lost datagrams
//!   (fio's drop_ios, over the whole job).

use crate::engine::Engine;
use crate::plan::fio::engines::NetPlan;
use crate::stats::OpKind;
use crate::workload::{NextOp, Step, StepMark, Workload};
use rustix::event::{poll, PollFd, PollFlags};
use rustix::io::Errno;
use rustix::net::{self, sockopt, AddressFamily, RecvFlags, SendFlags, SocketType};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

/// The slice every wait is cut into.
const SLICE: Duration = Duration::from_millis(100);
const LINK_MAGIC: u32 = 0x6c69_6e6b;
const LINK_OPEN: u32 = 0x98;
const LINK_CLOSE: u32 = 0x89;
const UDP_SEQ_MAGIC: u64 = 0x6573_7571_6e55_6563;
/// fio's struct udp_seq: magic, seq, bs (little endian u64 each).
const SEQ_LEN: usize = 24;
/// How long a TCP receiver that is done reads what its sender still sends.
const DRAIN: Duration = Duration::from_secs(1);

/// One net clone.
pub struct NetJob {
    plan: NetPlan,
    /// The TCP listener, or a UDP reader's bound socket until it is `sock`.
    listener: Option<OwnedFd>,
    sock: Option<OwnedFd>,
    /// Where datagrams go: the sender's target, or the source a reader last
    /// heard from (its pingpong answers and close message go there).
    peer: Option<SocketAddr>,
    buf: Vec<u8>,
    /// fio's io_issue_bytes: what every operation asked for.
    issued: u64,
    /// fio's this_io_bytes: what they moved.
    moved: u64,
    /// The remainder of a short transfer, the next operation's length.
    resid: usize,
    send_seq: u64,
    recv_seq: u64,
    /// A datagram without fio's sequence (another sender): stop counting.
    seq_off: bool,
    dropped: u64,
    ended: bool,
    /// When a time_based job's runtime is over (from its connection).
    deadline: Option<std::time::Instant>,
    failed: Option<String>,
    name: String,
}

impl NetJob {
    /// Clone `clone` of job `name`: its port is the job's plus its number
    /// (fio's subjob_number); a receiver binds (and listens) here.
    pub fn new(plan: &NetPlan, clone: u32, name: &str) -> Result<Self, String> {
        let mut plan = plan.clone();
        plan.port = u16::try_from(plan.port as u32 + clone)
            .map_err(|_| format!("{name}: port {} + clone {clone} is past 65535", plan.port))?;
        let mut job = NetJob {
            buf: (0..plan.bs as usize).map(|i| (i * 31 + 7) as u8).collect(),
            plan,
            listener: None,
            sock: None,
            peer: None,
            issued: 0,
            moved: 0,
            resid: 0,
            send_seq: 0,
            recv_seq: 0,
            seq_off: false,
            dropped: 0,
            ended: false,
            deadline: None,
            failed: None,
            name: name.to_string(),
        };
        if job.plan.listen {
            job.listener = Some(
                job.bind()
                    .map_err(|e| format!("{name}: net: port {}: {e}", job.plan.port))?,
            );
        } else {
            job.peer = Some(job.resolve()?);
        }
        Ok(job)
    }

    fn family(&self) -> AddressFamily {
        if self.plan.proto.v6() {
            AddressFamily::INET6
        } else {
            AddressFamily::INET
        }
    }

    fn socket(&self) -> std::io::Result<OwnedFd> {
        let ty = if self.plan.proto.udp() {
            SocketType::DGRAM
        } else {
            SocketType::STREAM
        };
        let fd = net::socket(self.family(), ty, None)?;
        if let Some(w) = self.plan.window_size {
            sockopt::set_socket_send_buffer_size(&fd, w as usize)?;
            sockopt::set_socket_recv_buffer_size(&fd, w as usize)?;
        }
        if let Some(m) = self.plan.mss.filter(|_| !self.plan.proto.udp()) {
            crate::sys::set_tcp_maxseg(fd.as_fd(), m)?;
        }
        if self.plan.nodelay && !self.plan.proto.udp() {
            sockopt::set_tcp_nodelay(&fd, true)?;
        }
        // every wait in slices, so that a stop is seen
        sockopt::set_socket_timeout(&fd, sockopt::Timeout::Recv, Some(SLICE))?;
        sockopt::set_socket_timeout(&fd, sockopt::Timeout::Send, Some(SLICE))?;
        Ok(fd)
    }

    /// fio's fio_netio_setup_listen_inet: SO_REUSEADDR and SO_REUSEPORT,
    /// a multicast group joined, bound to the port on every address.
    fn bind(&self) -> std::io::Result<OwnedFd> {
        let fd = self.socket()?;
        sockopt::set_socket_reuseaddr(&fd, true)?;
        sockopt::set_socket_reuseport(&fd, true)?;
        let mut any = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
        if let Some(group) = self.plan.host.as_deref().and_then(|h| h.parse::<Ipv4Addr>().ok()) {
            let intf = self.plan.interface.unwrap_or(Ipv4Addr::UNSPECIFIED);
            sockopt::set_ip_add_membership(&fd, &group, &intf)?;
            any = IpAddr::V4(group);
        } else if self.plan.proto.v6() {
            any = IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED);
        }
        net::bind(&fd, &SocketAddr::new(any, self.plan.port))?;
        if !self.plan.proto.udp() {
            net::listen(&fd, 10)?;
        }
        Ok(fd)
    }

    /// The peer's address (fio's getaddrinfo of hostname=).
    fn resolve(&self) -> Result<SocketAddr, String> {
        let host = self.plan.host.as_deref().unwrap_or_default();
        let found = (host, self.plan.port)
            .to_socket_addrs()
            .map_err(|e| format!("{}: net: hostname={host}: {e}", self.name))?
            .find(|a| a.is_ipv6() == self.plan.proto.v6());
        found.ok_or_else(|| {
            format!(
                "{}: net: hostname={host}: no address of the protocol's family",
                self.name
            )
        })
    }

    /// Connects, accepts or waits for a UDP sender's open message: Ok(true)
    /// once connected, Ok(false) while still waiting.
    fn open(&mut self) -> std::io::Result<bool> {
        let udp = self.plan.proto.udp();
        if !self.plan.listen {
            let fd = self.socket()?;
            let peer = self.peer.expect("a sender's peer is resolved when built");
            if udp {
                if let IpAddr::V4(a) = peer.ip() {
                    if a.is_multicast() {
                        if let Some(i) = self.plan.interface {
                            sockopt::set_ip_multicast_if(&fd, &i)?;
                        }
                        sockopt::set_ip_multicast_ttl(&fd, self.plan.ttl)?;
                    }
                }
                if !self.plan.read {
                    let msg = [LINK_MAGIC.to_be_bytes(), LINK_OPEN.to_be_bytes()].concat();
                    net::sendto(&fd, &msg, SendFlags::empty(), &peer)?;
                }
            } else {
                net::connect(&fd, &peer)?;
            }
            self.sock = Some(fd);
            return Ok(true);
        }
        let l = self.listener.as_ref().expect("a receiver's socket is bound when built");
        if udp {
            let mut msg = [0u8; 8];
            match net::recvfrom(l, &mut msg[..], RecvFlags::empty()) {
                Err(Errno::AGAIN | Errno::INTR) => return Ok(false),
                Err(e) => return Err(e.into()),
                Ok((_, n, from)) => {
                    let word = |i: usize| u32::from_be_bytes(msg[i..i + 4].try_into().expect("4 bytes"));
                    if n != 8 || word(0) != LINK_MAGIC || word(4) != LINK_OPEN {
                        return Err(std::io::Error::other(format!(
                            "bad udp open message {:x}/{:x} (fio's: {LINK_MAGIC:x}/{LINK_OPEN:x})",
                            word(0),
                            word(4)
                        )));
                    }
                    self.peer = from.and_then(|a| SocketAddr::try_from(a).ok());
                    self.sock = self.listener.take();
                    return Ok(true);
                }
            }
        }
        let mut fds = [PollFd::new(l, PollFlags::IN)];
        let timeout = rustix::time::Timespec::try_from(SLICE).expect("100 ms");
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(Errno::INTR) => return Ok(false),
            Ok(_) => {}
            Err(e) => return Err(e.into()),
        }
        let fd = net::accept(l)?;
        if self.plan.nodelay {
            sockopt::set_tcp_nodelay(&fd, true)?;
        }
        sockopt::set_socket_timeout(&fd, sockopt::Timeout::Recv, Some(SLICE))?;
        sockopt::set_socket_timeout(&fd, sockopt::Timeout::Send, Some(SLICE))?;
        self.sock = Some(fd);
        Ok(true)
    }

    /// One send of `buf[from..from + len]` (fio's fio_netio_send).
    fn send(&mut self, from: usize, len: usize, more: bool) -> Result<usize, Errno> {
        let fd = self.sock.as_ref().expect("connected");
        let data = &mut self.buf[from..from + len];
        if self.plan.proto.udp() {
            if len >= SEQ_LEN {
                let tail = &mut data[len - SEQ_LEN..];
                tail[..8].copy_from_slice(&UDP_SEQ_MAGIC.to_le_bytes());
                tail[8..16].copy_from_slice(&self.send_seq.to_le_bytes());
                tail[16..].copy_from_slice(&(len as u64).to_le_bytes());
                self.send_seq += 1;
            }
            let peer = self.peer.ok_or(Errno::DESTADDRREQ)?;
            return net::sendto(fd, data, SendFlags::empty(), &peer);
        }
        let flags = if more { SendFlags::MORE } else { SendFlags::empty() };
        net::send(fd, data, flags)
    }

    /// One recv into `buf[from..from + len]` (fio's fio_netio_recv); Ok(None)
    /// on the sender's close message.
    fn recv(&mut self, from: usize, len: usize) -> Result<Option<usize>, Errno> {
        let fd = self.sock.as_ref().expect("connected");
        let data = &mut self.buf[from..from + len];
        let n = if self.plan.proto.udp() {
            let (_, n, src) = net::recvfrom(fd, &mut *data, RecvFlags::empty())?;
            if self.plan.listen {
                self.peer = src.and_then(|a| SocketAddr::try_from(a).ok()).or(self.peer);
            }
            n
        } else {
            net::recv(fd, &mut *data, RecvFlags::empty())?.1
        };
        if n == 8 && data[..4] == LINK_MAGIC.to_le_bytes() && data[4..8] == LINK_CLOSE.to_le_bytes() {
            return Ok(None);
        }
        if self.plan.proto.udp() && !self.seq_off {
            // fio's verify_udp_seq: a gap in the sender's numbers is
            // datagrams lost; a datagram of another length, another sender
            match seq_of(&self.buf[from..from + n]) {
                Some(Some(seq)) => {
                    self.dropped += seq.saturating_sub(self.recv_seq);
                    self.recv_seq = seq + 1;
                }
                Some(None) => self.seq_off = true,
                None => {}
            }
        }
        Ok(Some(n))
    }

    /// Whether to give up a wait: a signal came, or a time_based job's
    /// runtime is over (the runner's other stops are not seen here).
    fn give_up(&self) -> bool {
        crate::interrupt::signal_record().load(std::sync::atomic::Ordering::Relaxed) != 0
            || self.deadline.is_some_and(|d| std::time::Instant::now() >= d)
    }

    /// The close message to the peer (fio's fio_netio_send_close, which
    /// both sides of a UDP link send).
    ///
    /// A TCP receiver first reads what its sender still sends (fio's
    /// byte count ends a receiver before the stream does, when transfers
    /// were short): closing with data unread would reset the connection
    /// under the sender's last sends (fio's sender then dies of SIGPIPE).
    fn close(&mut self, drain: bool) {
        if let (true, Some(fd), Some(peer)) = (self.plan.proto.udp(), self.sock.as_ref(), self.peer) {
            let msg = [LINK_MAGIC.to_le_bytes(), LINK_CLOSE.to_le_bytes()].concat();
            let _ = net::sendto(fd, &msg, SendFlags::empty(), &peer);
        } else if let (false, true, true, Some(fd)) = (self.plan.proto.udp(), self.plan.read, drain, self.sock.as_ref())
        {
            // until the sender closes, is silent for a slice, or a second
            // passed (a sender that runs for its own runtime)
            let until = std::time::Instant::now() + DRAIN;
            while std::time::Instant::now() < until
                && matches!(net::recv(fd, &mut self.buf[..], RecvFlags::empty()), Ok((_, n)) if n > 0)
            {}
        }
        self.sock = None;
    }

    /// One transfer (a receive when `read`) of `len` bytes from `from`,
    /// waiting in slices until it is done or `give_up`: Err(AGAIN) then.
    fn transfer(&mut self, read: bool, from: usize, len: usize) -> Result<Option<usize>, Errno> {
        loop {
            let r = if read {
                self.recv(from, len)
            } else {
                let more = self.plan.bytes.is_some_and(|b| self.moved + (len as u64) < b) && !self.plan.pingpong;
                self.send(from, len, more).map(Some)
            };
            match r {
                Err(Errno::AGAIN | Errno::INTR) if !self.give_up() => continue,
                r => return r,
            }
        }
    }
}

/// fio's struct udp_seq at the end of datagram `d`: Some(Some(seq)), or
/// Some(None) when the length it carries is not the datagram's; None when
/// the datagram has none.
fn seq_of(d: &[u8]) -> Option<Option<u64>> {
    let t = d.len().checked_sub(SEQ_LEN).map(|i| &d[i..])?;
    let word = |i: usize| u64::from_le_bytes(t[i..i + 8].try_into().expect("8 bytes"));
    if word(0) != UDP_SEQ_MAGIC {
        return None;
    }
    Some((word(16) == d.len() as u64).then(|| word(8)))
}

impl Workload for NetJob {
    fn next_op(&mut self, _slot: usize) -> Option<NextOp> {
        None
    }

    fn queues(&self) -> bool {
        false
    }

    fn error(&self) -> Option<String> {
        self.failed.clone()
    }

    fn dropped(&self) -> Option<(OpKind, u64)> {
        (self.plan.proto.udp() && self.plan.read).then_some((OpKind::Read, self.dropped))
    }

    fn step(&mut self, _e: &mut dyn Engine) -> Option<Step> {
        if self.failed.is_some() || self.ended {
            return None;
        }
        if self.sock.is_none() {
            return match self.open() {
                Ok(true) => {
                    self.deadline = self.plan.runtime.map(|r| std::time::Instant::now() + r);
                    Some(Step::marked(StepMark::Restart))
                }
                Ok(false) => Some(Step::marked(StepMark::Idle)),
                Err(e) => {
                    self.failed = Some(format!("{}: net: {e}", self.name));
                    None
                }
            };
        }
        let bs = self.plan.bs as usize;
        let len = match (self.resid, self.plan.bytes) {
            (0, Some(b)) if self.issued >= b => {
                self.close(true);
                self.ended = true;
                return None;
            }
            (0, Some(b)) => (b - self.issued).min(bs as u64) as usize,
            (0, None) => bs,
            (r, _) => r,
        };
        let from = bs - len.min(bs);
        let read = self.plan.read;
        let dir = if read { OpKind::Read } else { OpKind::Write };
        let mut r = self.transfer(read, from, len);
        if self.plan.pingpong && matches!(r, Ok(Some(n)) if n > 0) {
            // the answer, of the whole block; its length is the operation's
            r = self.transfer(!read, from, len);
        }
        if matches!(r, Err(Errno::AGAIN | Errno::INTR)) {
            // given up (a signal, the runtime's end): not an operation
            self.ended = true;
            return None;
        }
        self.issued += len as u64;
        let n = match r {
            Ok(None) | Ok(Some(0)) => {
                // the sender's close message, or the end of its stream
                self.ended = true;
                self.close(true);
                return None;
            }
            Ok(Some(n)) => n,
            Err(e) => {
                self.failed = Some(format!(
                    "{}: net: {}: {}",
                    self.name,
                    if read { "recv" } else { "send" },
                    std::io::Error::from(e)
                ));
                return Some(Step::new(dir, -(e.raw_os_error() as i64)));
            }
        };
        self.moved += n as u64;
        self.resid = len - n.min(len);
        let mut step = Step::new(dir, n as i64);
        step.short = self.resid > 0;
        Some(step)
    }
}

impl Drop for NetJob {
    /// However the job ended (its runtime, a stop, an error), a UDP side
    /// still connected tells its peer, as fio's close_file does: a reader
    /// waiting for more then ends. A stopped TCP receiver reads nothing more.
    fn drop(&mut self) {
        if self.sock.is_some() {
            self.close(false);
        }
    }
}
