//! fio's net engine options (engines/net.c): hostname, port, protocol,
//! listen, pingpong, nodelay, interface, ttl, window_size, mss; checked as
//! fio's `fio_netio_init` and `fio_netio_setup_listen_inet` check them, in
//! one line each naming the option.

use super::State;
use crate::plan::fio::engines::{NetPlan, NetProto};
use crate::plan::fiojob::Job;

/// The job's net plan, or None with its refusals in `st.m.bad`.
pub(super) fn plan(st: &mut State, job: &Job) -> Option<NetPlan> {
    let at = job.get("ioengine").map_or_else(|| job.at.clone(), |o| o.at.clone());
    let bad_before = st.m.bad.len();
    let (read, proto) = direction(st, job, &at);
    let (bs, bytes) = amounts(st, job, &at);
    let mut bad = |at: &str, why: String| st.m.bad.push((at.to_string(), why));
    let value = |key: &str| value(job, key);
    let port = match value("port") {
        None => {
            bad(
                &at,
                "ioengine=net needs port= (fio: network IO requires port for tcp or udp)".into(),
            );
            0
        }
        Some((a, v)) => match v.parse::<u16>() {
            Ok(p) if p > 0 => p,
            _ => {
                bad(&a, format!("port: '{v}' is not a port number (1-65535)"));
                0
            }
        },
    };
    let host = value("hostname")
        .or_else(|| value("filename"))
        .filter(|(_, v)| !v.is_empty());
    let multicast = host
        .as_ref()
        .and_then(|(_, h)| h.parse::<std::net::Ipv4Addr>().ok())
        .is_some_and(|a| a.is_multicast());
    let mut listen = job.flag("listen");
    if proto.udp() {
        if listen {
            let a = job.get("listen").map_or(at.clone(), |o| o.at.clone());
            bad(
                &a,
                "listen: only valid for TCP (fio: \"listen only valid for TCP proto IO\"); a UDP reader binds".into(),
            );
        }
        listen = read;
    }
    match &host {
        Some((a, h)) if listen && !(proto.udp() && multicast) => bad(
            a,
            format!("hostname={h}: not valid for a receiver that listens, unless a UDP multicast group (as fio)"),
        ),
        Some((a, _)) if multicast && proto.v6() => bad(a, "multicast is not supported over IPv6 (as fio)".into()),
        None if !listen => bad(
            &at,
            format!(
                "ioengine=net: a {} without listen needs hostname= to connect to",
                if read { "receiver" } else { "sender" }
            ),
        ),
        _ => {}
    }
    let (interface, ttl, window_size, mss) = socket_options(st, job);
    // a job without files (fslab's null engine lays out none), in the
    // direction fio's header names
    st.a.rw = if read { "read" } else { "write" }.into();
    st.a.size.get_or_insert_with(|| "4k".into());
    if st.m.bad.len() > bad_before {
        return None;
    }
    Some(NetPlan {
        proto,
        host: host.map(|(_, h)| h),
        port,
        read,
        listen,
        pingpong: job.flag("pingpong"),
        nodelay: job.flag("nodelay"),
        interface,
        ttl,
        window_size,
        mss,
        bs,
        bytes,
        runtime: st
            .a
            .runtime
            .as_deref()
            .and_then(|r| crate::units::parse_duration(r).ok())
            .filter(|_| st.time_based),
    })
}

/// The job's direction (rw: read receives, write sends) and protocol.
fn direction(st: &mut State, job: &Job, at: &str) -> (bool, NetProto) {
    let at = at.to_string();
    let mut bad = |at: &str, why: String| st.m.bad.push((at.to_string(), why));
    let value = |key: &str| value(job, key);
    let rw = value("rw").or_else(|| value("readwrite"));
    let read = match rw.as_ref().map(|(a, v)| (a, v.split(':').next().unwrap_or(""))) {
        None | Some((_, "read")) => true,
        Some((_, "write")) => false,
        Some((a, v)) if v.starts_with("rand") => {
            bad(
                a,
                format!("rw={v} with ioengine=net: network I/O cannot be random (fio refuses it too)"),
            );
            true
        }
        Some((a, v)) => {
            bad(
                a,
                format!("rw={v} with ioengine=net: fslab runs a net job as read (receive) or write (send)"),
            );
            true
        }
    };
    let proto = match value("protocol").or_else(|| value("proto")) {
        None => NetProto::Tcp,
        Some((_, v)) => match v.as_str() {
            "tcp" => NetProto::Tcp,
            "tcpv6" => NetProto::TcpV6,
            "udp" => NetProto::Udp,
            "udpv6" => NetProto::UdpV6,
            "unix" => {
                bad(
                    &at,
                    "protocol=unix: not supported (fio unlinks the socket's path before it binds)".into(),
                );
                NetProto::Tcp
            }
            other => {
                let a = job
                    .get("protocol")
                    .or(job.get("proto"))
                    .map_or(at.clone(), |o| o.at.clone());
                bad(&a, format!("protocol: '{other}' is not tcp, tcpv6, udp or udpv6"));
                NetProto::Tcp
            }
        },
    };
    (read, proto)
}

/// The block each operation asks for and the bytes to issue (None:
/// time_based); the pacing and verifying options, refused.
fn amounts(st: &mut State, job: &Job, at: &str) -> (u64, Option<u64>) {
    let at = at.to_string();
    let value = |key: &str| value(job, key);
    let bs = match crate::units::parse_size(st.a.bs.split(',').next().unwrap_or("4k").trim()) {
        Ok(b) if b > 0 && st.a.bssplit.is_none() => b,
        _ => {
            let a = job
                .get("bs")
                .or(job.get("bssplit"))
                .map_or(at.clone(), |o| o.at.clone());
            st.m.bad.push((
                a,
                "ioengine=net: one block size (bs=) is supported, not a range or split".into(),
            ));
            4096
        }
    };
    let bytes = if st.time_based && st.a.runtime.is_some() {
        None
    } else {
        // size as settled: a job file's, or fslab fio's own --size
        let size =
            st.a.size
                .clone()
                .map(|v| (job.get("size").map_or(at.clone(), |o| o.at.clone()), v));
        match value("io_size").or_else(|| value("io_limit")).or(size) {
            Some((a, v)) => match crate::units::parse_size(&v) {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    st.m.bad.push((
                        a,
                        format!("size: '{v}' is not a byte count (ioengine=net has no file to take a share of)"),
                    ));
                    None
                }
            },
            None => {
                st.m.bad.push((
                    at.clone(),
                    "ioengine=net needs size= (the bytes to send or receive), or time_based with a runtime".into(),
                ));
                None
            }
        }
    };
    for key in [
        "rate",
        "rate_iops",
        "rate_min",
        "rate_iops_min",
        "thinktime",
        "verify",
        "latency_target",
    ] {
        if let Some(o) = job.get(key) {
            let why = format!("{key} with ioengine=net: not supported (fslab paces and verifies file I/O only)");
            st.m.bad.push((o.at.clone(), why));
        }
    }
    (bs, bytes)
}

/// interface, ttl, window_size and mss.
fn socket_options(st: &mut State, job: &Job) -> (Option<std::net::Ipv4Addr>, u32, Option<u32>, Option<u32>) {
    let mut bad = |at: &str, why: String| st.m.bad.push((at.to_string(), why));
    let value = |key: &str| value(job, key);
    let interface = value("interface").and_then(|(a, v)| match v.parse() {
        Ok(ip) => Some(ip),
        Err(_) => {
            bad(&a, format!("interface: '{v}' is not an interface's IPv4 address"));
            None
        }
    });
    let mut number = |key: &str| {
        value(key).and_then(|(a, v)| match crate::units::parse_size(&v) {
            Ok(n) if n <= u32::MAX as u64 => Some(n as u32),
            _ => {
                bad(&a, format!("{key}: '{v}' is not a whole number"));
                None
            }
        })
    };
    let ttl = number("ttl").unwrap_or(1);
    let window_size = number("window_size");
    let mss = number("mss");
    (interface, ttl, window_size, mss)
}

/// Option `key` of `job` as (file:line, value trimmed).
fn value(job: &Job, key: &str) -> Option<(String, String)> {
    job.get(key)
        .map(|o| (o.at.clone(), o.value.as_deref().unwrap_or("").trim().to_string()))
}
