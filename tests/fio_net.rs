//! fio's net engine: a TCP stream and UDP pingpong over the loopback, run
//! by fio 3.33 and by fslab from the same job file; what each counts must
//! agree. And the net job that waits for a peer that never comes ends at
//! its runtime; the options fio refuses are refused in one line.

use crate::util::{have, job_file, require, run_fio};

/// A port no one listens on now (the kernel's pick, released).
fn free_port(udp: bool) -> u16 {
    if udp {
        std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    } else {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }
}

/// (name, read ops, write ops, read bytes, write bytes) of each job.
fn jobs(j: &serde_json::Value) -> Vec<(String, u64, u64, u64, u64)> {
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let (r, w) = (&x["read"], &x["write"]);
            let name = x["jobname"].as_str().unwrap().to_string();
            (
                name,
                n(&r["total_ios"]),
                n(&w["total_ios"]),
                n(&r["io_bytes"]),
                n(&w["io_bytes"]),
            )
        })
        .collect()
}

/// fio's netio.fio, smaller: a TCP receiver listens, a sender connects a
/// little later and sends 2 MiB in 4 KiB blocks. The sender's counts are
/// exact; the receiver's include its short reads (each a counted read whose
/// remainder is the next one), and it stops once what it asked for reaches
/// the size, as fio's does.
#[test]
fn tcp_stream_counts_as_fio_counts() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port(false);
    let text = format!(
        "[global]\nioengine=net\nport={port}\nprotocol=tcp\nbs=4k\nsize=2m\n\
         [receiver]\nlisten\nrw=read\n[sender]\nhostname=127.0.0.1\nstartdelay=200ms\nrw=write\n"
    );
    let job = job_file(dir.path(), "netio.fio", &text);
    let ours = run_fio(false, &job, dir.path());
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    let ours = jobs(ours.json());
    let (recv, send) = (&ours[0], &ours[1]);
    assert_eq!(
        (send.0.as_str(), send.1, send.2, send.4),
        ("sender", 0, 512, 2 << 20),
        "{ours:?}"
    );
    assert_eq!(recv.0, "receiver");
    // every read moved something, and the bytes asked for reach the size
    assert!(recv.1 >= 512 && recv.3 <= 2 << 20 && recv.3 >= 1 << 20, "{ours:?}");
    if !require("fio", have("fio")) {
        return;
    }
    // fio 3.33's own run of it fails now and then (its sender dies of
    // SIGPIPE): the best of three
    let theirs = (0..3)
        .map(|_| run_fio(true, &job, dir.path()))
        .find(|r| r.code == 0)
        .expect("fio ran the job once in three tries");
    let theirs = jobs(theirs.json());
    assert_eq!(theirs[1], ours[1], "sender: fio {theirs:?}, fslab {ours:?}");
    assert_eq!(theirs[0].0, ours[0].0);
    // both readers stop as the bytes they asked for reach the size
    assert!(theirs[0].1 >= 512 && theirs[0].3 <= 2 << 20, "fio {theirs:?}");
}

/// UDP pingpong, unicast: each datagram the writer sends, the reader
/// answers; both count every block, as fio does.
#[test]
fn udp_pingpong_answers_every_datagram() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port(true);
    let text = format!(
        "[global]\nioengine=net\nprotocol=udp\nport={port}\nbs=256\nsize=64k\npingpong\n\
         [reader]\nrw=read\n[writer]\nhostname=127.0.0.1\nstartdelay=200ms\nrw=write\n"
    );
    let job = job_file(dir.path(), "pingpong.fio", &text);
    let tools: &[bool] = if have("fio") { &[false, true] } else { &[false] };
    for &fio in tools {
        let r = run_fio(fio, &job, dir.path());
        assert_eq!(r.code, 0, "{}: {}", r.tool, r.stderr);
        let j = jobs(r.json());
        assert_eq!(j[0], ("reader".into(), 256, 0, 64 << 10, 0), "{}: {j:?}", r.tool);
        assert_eq!(j[1], ("writer".into(), 0, 256, 0, 64 << 10), "{}: {j:?}", r.tool);
    }
    // fslab's own result: the reader counted its losses, none (0, not
    // absent: counted), and the writer, which counts none, has no such key
    let res = dir.path().join("pingpong.json");
    let out = crate::util::fslab()
        .current_dir(dir.path())
        .args(["fio", "--quiet", "--output=/dev/null", "--results"])
        .arg(&res)
        .arg(&job)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&res).unwrap()).unwrap();
    let dropped: Vec<(String, &serde_json::Value)> = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                &c["directions"][0]["dropped_ops"],
            )
        })
        .collect();
    assert_eq!(
        dropped,
        [
            ("reader".to_string(), &serde_json::json!(0)),
            ("writer".to_string(), &serde_json::Value::Null)
        ],
        "{r}"
    );
}

/// A receiver whose sender never comes waits in slices, and its runtime
/// ends it (fio's waits forever): no operation counted, no hang.
#[test]
fn a_receiver_without_a_sender_ends_at_its_runtime() {
    let port = format!("--port={}", free_port(false));
    // a receiver left waiting is killed by the hang guard, and fails
    let out = crate::util::fslab()
        .args([
            "fio",
            "--quiet",
            "--name=r",
            "--ioengine=net",
            "--listen",
            "--rw=read",
            "--size=1m",
        ])
        .args(["--time_based", "--runtime=1s", "--output-format=json", &port])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(jobs(&j)[0].1, 0, "{j}");
}

/// What fio refuses of a net job, refused in one line naming the option.
#[test]
fn net_options_fio_refuses_are_refused() {
    let base = ["fio", "--name=n", "--ioengine=net", "--size=1m"];
    let case = |extra: &[&str], want: &str| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        crate::util::refusal(&args, want)
    };
    crate::util::expect_refusals(
        &[
            case(
                &["--port=9", "--rw=randread", "--listen"],
                "network I/O cannot be random",
            ),
            case(&["--listen"], "ioengine=net needs port="),
            case(
                &["--port=9", "--listen", "--hostname=localhost"],
                "hostname=localhost: not valid for a receiver",
            ),
            case(
                &["--port=9", "--protocol=udp", "--listen"],
                "listen: only valid for TCP",
            ),
            case(
                &["--port=9", "--protocol=unix", "--listen"],
                "protocol=unix: not supported",
            ),
            case(&["--port=9", "--rw=write"], "a sender without listen needs hostname="),
        ],
        &[],
    );
}

/// A UDP reader counts the datagrams missing from its sender's sequence
/// (fio's drop_ios): a sender speaking fio's wire format skips number 2.
/// fio's own reader, given the same datagrams, counts the same.
#[test]
fn a_udp_reader_counts_the_datagrams_lost() {
    let tools: &[&str] = if have("fio") { &["fslab", "fio"] } else { &["fslab"] };
    for tool in tools {
        let port = free_port(true);
        let mut child = crate::util::fio_or_fslab(tool, true)
            .args([
                "--name=r",
                "--ioengine=net",
                "--protocol=udp",
                "--rw=read",
                "--bs=64",
                "--size=192",
            ])
            .args(["--output-format=json", &format!("--port={port}")])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // the reader has bound its port once this bind fails; a reader
        // that exits first never will (and a hung one is ended by the
        // generous cap on tries, a hang guard only)
        let mut tries = 0u32;
        while std::net::UdpSocket::bind(("0.0.0.0", port)).is_ok() {
            tries += 1;
            let exited = child.try_wait().unwrap();
            if exited.is_some() || tries > 12_000 {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{tool}: the reader never bound port {port} ({exited:?}, {tries} tries)");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = ("127.0.0.1", port);
        let open = [0x6c69_6e6bu32.to_be_bytes(), 0x98u32.to_be_bytes()].concat();
        s.send_to(&open, to).unwrap();
        for seq in [0u64, 1, 3] {
            let mut d = vec![0u8; 64];
            d[40..48].copy_from_slice(&0x6573_7571_6e55_6563u64.to_le_bytes());
            d[48..56].copy_from_slice(&seq.to_le_bytes());
            d[56..].copy_from_slice(&64u64.to_le_bytes());
            s.send_to(&d, to).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{tool}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let j: serde_json::Value = serde_json::from_str(stdout.trim_start_matches(|c| c != '{')).unwrap();
        let r = &j["jobs"][0]["read"];
        assert_eq!(
            (r["total_ios"].as_u64(), r["drop_ios"].as_u64()),
            (Some(3), Some(1)),
            "{tool}: {j}"
        );
    }
}

/// A UDP reader sized for more than its time_based sender sends ends when
/// the sender's runtime does: the sender tells it (fio's close message),
/// however its job ended.
#[test]
fn a_udp_reader_ends_with_its_time_based_sender() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port(true);
    let text = format!(
        "[global]\nioengine=net\nprotocol=udp\nport={port}\nbs=1k\n[reader]\nrw=read\nsize=1g\n\
         [writer]\nhostname=127.0.0.1\nrw=write\ntime_based\nruntime=500ms\nstartdelay=100ms\n"
    );
    let job = job_file(dir.path(), "udp.fio", &text);
    // a reader left waiting would be killed here, and the test fail
    let out = crate::util::fslab()
        .args(["fio", "--quiet", "--output-format=json"])
        .arg(&job)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = jobs(&serde_json::from_slice(&out.stdout).unwrap());
    assert!(j[0].1 > 0 && j[1].2 >= j[0].1, "{j:?}");
}
