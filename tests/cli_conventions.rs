//! Command-line conventions: word flags as clap value enums (listed in
//! --help, a typo refused with a suggestion), help headings, examples that
//! fit 80 columns, shell completions, the man page, --version with the git
//! commit (also in every result file), and 128 + signal exit codes.

use crate::util::*;
use clap::{CommandFactory, ValueEnum};
use fslab::cli::{words, Cli};
use std::process::Command;

/// HEAD's commit, when the tests run from a git work tree of the package.
fn head_commit() -> Option<String> {
    let dir = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("git")
        .args(["-C", dir, "rev-parse", "--show-toplevel", "HEAD"])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut lines = text.lines();
    let top = std::fs::canonicalize(lines.next()?).ok()?;
    (out.status.success() && top == std::fs::canonicalize(dir).ok()?).then(|| lines.next().map(String::from))?
}

#[test]
fn version_names_the_commit_and_the_build_profile() {
    let out = fslab().arg("--version").output().unwrap();
    assert!(out.status.success());
    let v = String::from_utf8(out.stdout).unwrap();
    let want = head_commit().unwrap_or_else(|| "unknown".into());
    assert!(
        v.starts_with(&format!("fslab {} (commit {want}, ", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    // the test binary is built with the same profile as the fslab it runs
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    assert!(v.trim_end().ends_with(&format!("{profile})")), "{v}");
    // subcommands say the same
    let sub = fslab().args(["io", "--version"]).output().unwrap();
    assert_eq!(
        String::from_utf8(sub.stdout).unwrap(),
        v.replacen("fslab", "fslab-io", 1)
    );
}

#[test]
fn every_result_file_records_the_version_string() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let v = String::from_utf8(fslab().arg("--version").output().unwrap().stdout).unwrap();
    let long = v.trim_end().strip_prefix("fslab ").unwrap().to_string();
    fslab()
        .args([
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--engine",
            "null",
            "--size",
            "1m",
        ])
        .args(["--quiet", "--output", &format!("json:{}", json.display())])
        .assert()
        .success();
    let j = read_json(&json);
    assert_eq!(j["fslab_build"], long.as_str());
    assert_eq!(j["fslab_version"], env!("CARGO_PKG_VERSION"));
    // a file of an older fslab, without the field, still reads
    let mut old = j.clone();
    old.as_object_mut().unwrap().remove("fslab_build");
    let old_path = dir.path().join("old.json");
    std::fs::write(&old_path, serde_json::to_string(&old).unwrap()).unwrap();
    fslab().args(["compare", old_path.to_str().unwrap()]).assert().success();
}

#[test]
fn a_typo_in_a_word_flag_exits_2_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["io", "--target", t, "--rw", "randreed"],
            "invalid value 'randreed' for '--rw <PATTERN>'",
        ),
        (&["io", "--target", t, "--engine", "urin"], "'--engine <ENGINE>'"),
        (&["io", "--target", t, "--on-error", "stopp"], "'--on-error <WHAT>'"),
        (&["meta", "--target", t, "--order", "seq,randon"], "'randon'"),
        (&["probe", "--target", t, "--op", "creat"], "'--op <OP>'"),
        (
            &["replay", "x.load", "--target", t, "--timestamps", "honur"],
            "'--timestamps <MODE>'",
        ),
        (&["run", "--scratch", "ext5"], "'--scratch <TYPES>'"),
        (
            &["fio", "--output-format", "jsno", "x.fio"],
            "'--output-format <FORMAT>'",
        ),
        (&["completions", "bsh"], "'bsh'"),
    ];
    for (args, want) in cases {
        expect_usage(args, want);
        let err = String::from_utf8(fslab().args(*args).output().unwrap().stderr).unwrap();
        assert!(err.contains("a similar value exists"), "{args:?}: {err}");
        assert!(err.contains("possible values"), "{args:?}: {err}");
    }
    let err = String::from_utf8(fslab().args(cases[0].0).output().unwrap().stderr).unwrap();
    assert!(err.contains("'randread'"), "the suggestion: {err}");
    assert!(err.contains("see 'fslab io --help'"), "{err}");
}

#[test]
fn help_lists_each_word_flags_values_under_headings() {
    let out = fslab().args(["io", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for heading in ["Workload:", "Engine:", "Target:", "Output:", "Safety:", "Telemetry:"] {
        assert!(help.lines().any(|l| l == heading), "no {heading} in:\n{help}");
    }
    let section = |flag: &str| -> String {
        let start = help.find(&format!("      {flag} ")).unwrap_or_else(|| panic!("{flag}"));
        let rest = &help[start + 6..];
        let end = rest.find("\n      --").unwrap_or(rest.len());
        rest[..end].to_string()
    };
    for word in ["read", "write", "randread", "randwrite", "rw", "randrw"] {
        assert!(
            section("--rw").contains(&format!("- {word}:")),
            "{word}: {}",
            section("--rw")
        );
    }
    for word in ["sync", "uring", "null"] {
        assert!(
            section("--engine").contains(&format!("- {word}:")),
            "{}",
            section("--engine")
        );
    }
    for word in ["continue", "stop"] {
        assert!(
            section("--on-error").contains(&format!("- {word}:")),
            "{}",
            section("--on-error")
        );
    }
    // -h: the short list
    let short = String::from_utf8(fslab().args(["meta", "-h"]).output().unwrap().stdout).unwrap();
    assert!(short.contains("[possible values: seq, random]"), "{short}");
}

/// Every word a flag lists is one its plan accepts: the value enums and the
/// plan parsers agree (what clap lets through, the plan does not refuse).
#[test]
fn every_listed_word_builds_a_plan() {
    fn names<E: ValueEnum>() -> Vec<String> {
        E::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .flat_map(|p| p.get_name_and_aliases().map(String::from).collect::<Vec<_>>())
            .collect()
    }
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let parse = |args: &[&str]| -> Result<(), String> {
        let mut argv = vec!["fslab"];
        argv.extend_from_slice(args);
        let cli = <Cli as clap::Parser>::try_parse_from(&argv).map_err(|e| e.to_string())?;
        use fslab::cli::Command as C;
        let r = match &cli.command {
            C::Io(a) => fslab::plan::IoPlan::from_args(a).map(drop),
            C::Meta(a) => fslab::plan::MetaPlan::from_args(a).map(drop),
            C::Probe(a) => fslab::plan::ProbePlan::from_args(a).map(drop),
            _ => unreachable!(),
        };
        r.map_err(|e| e.to_string())
    };
    let mut failed = Vec::new();
    let check = |failed: &mut Vec<String>, args: Vec<&str>| {
        if let Err(e) = parse(&args) {
            failed.push(format!("{args:?}: {e}"));
        }
    };
    for w in names::<words::Rw>() {
        check(&mut failed, vec!["io", "--target", t, "--rw", &w, "--engine", "null"]);
    }
    for w in names::<words::IoEngine>() {
        check(&mut failed, vec!["io", "--target", t, "--engine", &w]);
    }
    for w in names::<words::Verify>() {
        check(&mut failed, vec!["io", "--target", t, "--verify", &w, "--rw", "write"]);
    }
    for w in names::<words::OnError>() {
        check(&mut failed, vec!["io", "--target", t, "--on-error", &w]);
    }
    for w in names::<words::MetaEngine>() {
        match parse(&["meta", "--target", t, "--engine", &w]) {
            // a kernel without io_uring's opcodes refuses it, rightly; the word is known
            Err(e) if w.contains("uring") && !e.contains("unknown engine") => {}
            Err(e) => failed.push(format!("meta --engine {w}: {e}")),
            Ok(()) => {}
        }
    }
    for w in names::<words::Order>() {
        check(&mut failed, vec!["meta", "--target", t, "--order", &w]);
    }
    for w in names::<words::MetaPhase>() {
        check(
            &mut failed,
            vec!["meta", "--target", t, "--phases", &w, "--xattr", "user.a:8"],
        );
    }
    for w in names::<words::ProbeOp>() {
        check(&mut failed, vec!["probe", "--target", t, "--op", &w]);
    }
    assert!(
        failed.is_empty(),
        "words the CLI offers but the plan refuses:\n{}",
        failed.join("\n")
    );
    // replay, run and fio parse their words in their plans from files: the
    // words are checked against the parsers' lists here
    let listed = |e: Vec<String>| e.join(",");
    assert_eq!(listed(names::<words::Timestamps>()), "honour,honor,ignore");
    let mut fs = fslab::plan::MKFS_TYPES
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();
    fs.push("tmpfs".into());
    assert_eq!(listed(names::<words::ScratchFs>()), fs.join(","));
    for w in names::<words::FioFormat>() {
        assert!(fslab::plan::fio::output::FioFormats::parse(&w).is_ok(), "{w}");
    }
}

/// fio's spellings of `fslab io`'s flags (--numjobs, --ioengine psync,
/// --ramp_time, --rwmixwrite) build the very plan fslab's own spellings
/// build; giving both of a pair, or a share over 100, is refused.
#[test]
fn fio_spellings_of_io_flags_build_the_same_plan() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let plan = |args: &[&str]| -> Result<serde_json::Value, String> {
        let mut argv = vec!["fslab", "io", "--target", t, "--rw", "randrw", "--runtime", "5s"];
        argv.extend_from_slice(args);
        let cli = <Cli as clap::Parser>::try_parse_from(&argv).map_err(|e| e.to_string())?;
        let fslab::cli::Command::Io(a) = &cli.command else {
            unreachable!()
        };
        let p = fslab::plan::IoPlan::from_args(a).map_err(|e| e.to_string())?;
        Ok(serde_json::to_value(p).unwrap())
    };
    let ours = plan(&["--jobs", "3", "--engine", "sync", "--ramp", "1s", "--rwmixread", "30"]).unwrap();
    let fios = plan(&[
        "--numjobs",
        "3",
        "--ioengine",
        "psync",
        "--ramp_time",
        "1s",
        "--rwmixwrite",
        "70",
    ])
    .unwrap();
    assert_eq!(ours, fios);
    assert_ne!(ours, plan(&[]).unwrap(), "the flags changed the plan");
    assert_eq!(fios["rwmixread"], 30, "{fios}");
    let both = plan(&["--rwmixread", "30", "--rwmixwrite", "70"]).unwrap_err();
    assert!(both.contains("--rwmixwrite") && both.contains("--rwmixread"), "{both}");
    let over = plan(&["--rwmixwrite", "101"]).unwrap_err();
    assert!(over.contains("--rwmixwrite"), "{over}");
}

#[test]
fn examples_are_not_wrapped_at_80_columns() {
    let cmd = Cli::command();
    let mut pages = vec![(Vec::<String>::new(), cmd.get_after_help().map(|h| h.to_string()))];
    for sub in cmd.get_subcommands() {
        pages.push((
            vec![sub.get_name().to_string()],
            sub.get_after_help().map(|h| h.to_string()),
        ));
    }
    let mut checked = 0;
    for (args, after) in pages {
        let Some(after) = after else { continue };
        let out = fslab().args(&args).arg("--help").env("COLUMNS", "80").output().unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        let shown: Vec<&str> = help.lines().collect();
        for line in after.lines() {
            assert!(
                line.chars().count() < 80,
                "fslab {args:?}: an example line of {} columns: {line}",
                line.chars().count()
            );
            assert!(
                shown.contains(&line.trim_end()),
                "fslab {args:?} --help at 80 columns breaks the line:\n{line}\n---\n{help}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} commands have examples");
}

#[test]
fn bash_accepts_the_completion_script() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fslab.bash");
    let out = fslab().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // the script completes the subcommands and a word flag's values
    assert!(text.contains("complete -F _fslab"), "{text}");
    assert!(text.contains("randread"), "--rw's values");
    std::fs::write(&script, &text).unwrap();
    let bash = Command::new("bash").arg("-n").arg(&script).output().unwrap();
    assert!(bash.status.success(), "{}", String::from_utf8_lossy(&bash.stderr));
    for shell in ["zsh", "fish"] {
        let out = fslab().args(["completions", shell]).output().unwrap();
        assert!(out.status.success() && out.stdout.len() > 1000, "{shell}");
        let t = String::from_utf8(out.stdout).unwrap();
        assert!(
            !t.contains("schema") && !t.contains("guest-"),
            "{shell} offers hidden items"
        );
    }
    // nothing hidden: the schema command, a guest's own flags
    assert!(!text.contains("schema") && !text.contains("guest-"), "{text}");
    // --output offers its formats, each one the command takes, not file names
    let io = text.split("fslab__subcmd__io)").nth(1).unwrap();
    let line = io.lines().skip_while(|l| !l.contains("--output)")).nth(1).unwrap();
    assert!(line.contains("json:") && line.contains("fio-json"), "{line}");
    for command in ["run", "io", "meta", "probe", "replay", "calibrate"] {
        let formats = fslab::plan::formats_of(command).unwrap();
        for f in formats {
            let parsed = fslab::plan::Outputs::parse(&[f.to_string()], false, command);
            assert!(parsed.is_ok(), "{command} --output {f}: {:?}", parsed.err());
        }
    }
    assert!(
        fslab::plan::formats_of("report").is_none(),
        "report's --output is a path"
    );
}

#[test]
fn the_man_page_renders() {
    if !require("man (man-db) and groff", have("man") && have("groff")) {
        return;
    }
    for args in [&["man"][..], &["man", "io"][..]] {
        let out = fslab().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let roff = String::from_utf8(out.stdout).unwrap();
        assert!(
            roff.lines().any(|l| l.starts_with(".TH ")),
            "{args:?}: not a man page: {roff:.200}"
        );
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("fslab.1");
        std::fs::write(&page, &roff).unwrap();
        // man -l renders a local file; -P cat and no terminal: plain text
        let shown = Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .env_remove("MAN_KEEP_FORMATTING")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(
            shown.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&shown.stderr)
        );
        let name = if args.len() == 1 { "fslab" } else { "fslab-io" };
        assert!(text.contains("NAME") && text.contains(name), "{args:?}:\n{text}");
        assert!(text.contains("OPTIONS"), "{args:?}:\n{text}");
        if args.len() == 2 {
            assert!(text.contains("--rw"), "{text}");
        } else {
            assert!(text.contains("SUBCOMMANDS"), "{text}");
        }
        // groff renders it without a warning
        let groff = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&page)
            .output()
            .unwrap();
        assert!(
            groff.status.success() && groff.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&groff.stderr)
        );
    }
    // every subcommand has its page (`fslab man` lists them by hand)
    // (hidden ones, as `fslab schema`, have none), renders without a
    // warning, states the exit codes, and shows its --help examples as
    // written: one command line per line, never reflowed at 80 columns
    let top = Cli::command();
    for sub in std::iter::once(&top).chain(top.get_subcommands().filter(|s| !s.is_hide_set())) {
        let name = sub.get_name();
        let args: Vec<&str> = if name == "fslab" {
            vec!["man"]
        } else {
            vec!["man", name]
        };
        let out = fslab().args(&args).output().unwrap();
        let roff = String::from_utf8(out.stdout).unwrap();
        if name != "fslab" {
            assert!(roff.contains(&format!("fslab\\-{name}")), "{name}");
        }
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("p.1");
        std::fs::write(&page, &roff).unwrap();
        let groff = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&page)
            .output()
            .unwrap();
        assert!(
            groff.stderr.is_empty(),
            "{name}: {}",
            String::from_utf8_lossy(&groff.stderr)
        );
        let shown = Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .env_remove("MAN_KEEP_FORMATTING")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&shown.stdout);
        let shown: Vec<&str> = text.lines().map(str::trim).collect();
        assert!(shown.contains(&"EXIT STATUS"), "{name}:\n{text}");
        let after = sub.get_after_help().map(|h| h.to_string()).unwrap_or_default();
        let examples: Vec<&str> = after
            .lines()
            .skip_while(|l| l.trim() != "Examples:")
            .skip(1)
            .take_while(|l| l.is_empty() || l.starts_with(' '))
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if !examples.is_empty() {
            assert!(shown.contains(&"EXAMPLES"), "{name}:\n{text}");
        }
        for e in examples {
            assert!(
                shown.contains(&e),
                "{name}: the example line is not shown as written: {e}\n{text}"
            );
        }
    }
    expect_usage(&["man", "nosuch"], "invalid value 'nosuch'");
}

#[test]
fn sigterm_exits_143_and_sigint_130() {
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let out = format!("json:{}", json.display());
        let mut child = start(&[
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--size",
            "4m",
            "--runtime",
            "60s",
            "--quiet",
            "--output",
            &out,
        ]);
        wait_for_workdir(&mut child, dir.path());
        let o = signal_and_wait(child, sig);
        assert_eq!(
            o.status.code(),
            Some(code),
            "signal {sig}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(read_json(&json)["interrupted"], true);
        assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
    }
}
