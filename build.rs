//! Build facts for `fslab --version` and every result file: the git commit
//! the binary was built from and the cargo profile. Both are read at build
//! time; a build from a source tarball (no `.git`) says "unknown" for the
//! commit rather than failing.
//!
//! Sets `FSLAB_LONG_VERSION` ("0.1.0 (commit <40 hex>, release)"), the one
//! string the CLI prints and `model::Report` records.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    // cargo's PROFILE is "debug" or "release" (a custom profile reports the one it inherits from)
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into());
    let commit = git_commit(&manifest).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=FSLAB_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=FSLAB_BUILD_PROFILE={profile}");
    println!("cargo:rustc-env=FSLAB_LONG_VERSION={version} (commit {commit}, {profile})");
    println!("cargo:rerun-if-changed=build.rs");
}

/// HEAD's commit, when the package itself is a git work tree (not merely a
/// directory inside some other repository, as an unpacked tarball may be).
/// Also tells cargo which git files to watch, so a new commit rebuilds.
fn git_commit(manifest: &Path) -> Option<String> {
    let top = git(manifest, &["rev-parse", "--show-toplevel"])?;
    if Path::new(&top).canonicalize().ok()? != manifest.canonicalize().ok()? {
        return None;
    }
    let commit = git(manifest, &["rev-parse", "HEAD"])?;
    if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    // HEAD names the branch (or the commit, detached); the branch's ref is a
    // loose file or a line of packed-refs in the common directory (which a
    // worktree shares). Only existing files are named: cargo reruns the
    // script on every build for a missing one.
    let watch = |p: PathBuf| {
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    };
    let abs = |p: String| -> PathBuf {
        let p = PathBuf::from(p);
        if p.is_absolute() {
            p
        } else {
            manifest.join(p)
        }
    };
    if let Some(head) = git(manifest, &["rev-parse", "--git-path", "HEAD"]) {
        watch(abs(head));
    }
    if let Some(common) = git(manifest, &["rev-parse", "--git-common-dir"]) {
        let common = abs(common);
        watch(common.join("packed-refs"));
        if let Some(branch) = git(manifest, &["symbolic-ref", "-q", "HEAD"]) {
            watch(common.join(branch));
        }
    }
    Some(commit)
}

/// One git command's trimmed stdout, None when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}
