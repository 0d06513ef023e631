//! A job's named files: fio's `filename=a:b:c` list (options.c
//! `str_filename_cb`, filesetup.c `add_file`), each name under the job's
//! `directory=` as fio joins them.
//!
//! fio runs one job over every file the list names (its nr_files is their
//! count; `file_service_type` picks among them), shares them with the
//! job's clones, and gives each `size / nr_files` bytes, or, without a
//! size, each existing file its own. fslab runs such a job over the files
//! as they are when every one exists (each checked as a single existing
//! `filename=` is: a regular file on a real filesystem, consent to write
//! it, never extended), or over files of its own in their one directory
//! when none does (as for a single new `filename=`); a list of both is
//! refused.

use super::State;
use crate::cli::FioArgs;
use crate::plan::fiojob::{Job, Opt};
use crate::units::excerpt;
use std::path::{Path, PathBuf};

/// fio's `get_next_str` over a filename= value: names split at each ':'
/// not escaped as `\:` (the backslash dropped), empty names skipped, and
/// the value's blanks at either end trimmed first.
pub(in crate::plan::fio) fn names(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = v.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A name under the job's directory as fio makes it (`add_file`: the
/// directory, '/', the name): an absolute name stays under the directory,
/// where `Path::join` would leave it.
pub(in crate::plan::fio) fn joined(dir: Option<&str>, name: &str) -> PathBuf {
    match dir {
        Some(d) => PathBuf::from(format!("{d}/{name}")),
        None => PathBuf::from(name),
    }
}

/// fio's directory=a:b (options.c `str_directory_cb`, `set_name_idx`):
/// with filename= every name is under the first directory; without,
/// fio spreads the clones' files over them, which fslab does not do.
/// Each must be a directory itself (fio lstats them: not a symlink).
/// False when the job is refused.
pub(super) fn directory(st: &mut State) -> bool {
    let Some((d, at)) = st.directory.take() else {
        return true;
    };
    let dirs = names(&d);
    if dirs.len() < 2 {
        // one directory, its `\:` unescaped
        st.directory = Some((dirs.into_iter().next().unwrap_or(d), at));
        return true;
    }
    if st.filename.is_none() {
        st.m.unsupported.push(format!(
            "{at}: directory={}: several directories without filename= are not supported (fio spreads the clones' files over them)",
            excerpt(&d)
        ));
        return false;
    }
    for x in &dirs {
        if !std::fs::symlink_metadata(x).is_ok_and(|m| m.is_dir()) {
            st.m.bad.push((
                at,
                format!(
                    "directory: '{}' is not a directory (fio: \"{} is not a directory\")",
                    excerpt(x),
                    excerpt(x)
                ),
            ));
            return false;
        }
    }
    st.directory = Some((dirs[0].clone(), at));
    true
}

/// A job with filename= has as many files as it names (fio's nr_files
/// is their count: a larger nrfiles is cut to it, init.c
/// `fixup_options`). filesize= is each file's: the job's size is `n` of
/// them (it was settled before the files were counted).
pub(super) fn counted(st: &mut State, n: u64, fa: &FioArgs) {
    st.nrfiles = n;
    st.a.nrfiles = n.to_string();
    if let (Some((fs, fs_at)), None) = (&st.filesize, &fa.size) {
        match crate::units::parse_size(fs).ok().and_then(|v| v.checked_mul(n)) {
            Some(t) if t <= crate::units::MAX_SIZE => st.a.size = Some(t.to_string()),
            _ => {
                st.m.bad
                    .push((fs_at.clone(), format!("filesize={fs} × {n} files: more than 8 EiB")))
            }
        }
    }
}

/// A filename= naming several files (`names`, the option at `at`): the
/// job's files, its file count and its target.
pub(super) fn list_target(st: &mut State, job: &Job, names: Vec<String>, at: String, fa: &FioArgs) {
    let value = job.get("filename").and_then(|o| o.value.as_deref()).unwrap_or("");
    let shown = format!("filename={}", excerpt(value));
    let dir = st.directory.as_ref().map(|(d, _)| d.clone());
    let paths: Vec<PathBuf> = names.iter().map(|n| joined(dir.as_deref(), n)).collect();
    let n = paths.len() as u64;
    if let Some(twice) = paths.iter().enumerate().find(|(i, p)| paths[..*i].contains(p)) {
        let why = format!(
            "{shown}: names {} twice; fslab works on each file of a job once",
            excerpt(&twice.1.display().to_string())
        );
        st.m.unsupported.push(format!("{at}: {why}"));
        return;
    }
    // fio's nr_files is the list's length (a larger nrfiles is cut to it;
    // a smaller one given after the list would split size= unevenly)
    let last = |keys: &[&str]| {
        job.opts
            .iter()
            .rposition(|o| keys.contains(&o.key.replace('-', "_").as_str()))
    };
    if let (Some(i), Some(f)) = (last(&["nrfiles", "nr_files"]), last(&["filename"])) {
        let o = &job.opts[i];
        if i > f && st.nrfiles < n {
            st.m.unsupported.push(format!(
                "{}: nrfiles={} with {shown} naming {n} files is not supported",
                o.at, st.nrfiles
            ));
            return;
        }
    }
    counted(st, n, fa);
    st.m.flag_at.push(("--nrfiles", at.clone(), "filename".into()));
    st.m.flag_at.push(("--target", at.clone(), "filename".into()));
    let missing: Vec<&PathBuf> = paths.iter().filter(|p| !p.exists()).collect();
    if missing.is_empty() {
        // every file exists: the job runs over them as they are
        st.a.common.target = paths[0].display().to_string();
        st.a.allow_device = fa.allow_device;
        st.a.force_overwrite = fa.force_overwrite;
        st.m.region.named = paths;
        return;
    }
    if missing.len() < paths.len() {
        let there = paths.iter().find(|p| p.exists()).expect("one exists");
        st.m.unsupported.push(format!(
            "{at}: {shown}: {} exists and {} does not; fslab runs a job over existing files or over new files of its own, not both",
            excerpt(&there.display().to_string()),
            excerpt(&missing[0].display().to_string())
        ));
        return;
    }
    let parent = |p: &Path| {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    };
    let home = parent(&paths[0]);
    if let Some(other) = paths.iter().find(|p| parent(p) != home) {
        st.m.unsupported.push(format!(
            "{at}: {shown}: new files in {} and {}; fslab lays out a job's new files in one directory",
            excerpt(&home.display().to_string()),
            excerpt(&parent(other).display().to_string())
        ));
        return;
    }
    if st.a.size.is_none() && !st.m.region.fill {
        st.m.bad.push((
            at,
            format!("{shown}: the files do not exist and the job has no size (fio refuses it too: \"you need to specify size=\")"),
        ));
        return;
    }
    // none exists: fslab's own files, one per name, in their directory,
    // shared by the job's clones as fio's are
    st.m.region.shared_files = true;
    st.a.common.target = home.display().to_string();
    st.m.notes.push(format!(
        "{shown}: fslab works in {n} files of its own directory in {} instead, shared by the job's clones (and removes them afterwards)",
        excerpt(&st.a.common.target)
    ));
}

/// fio's allow_file_create (a bool, 1 by default): read in `finish`.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    if key != "allow_file_create" {
        return None;
    }
    let v = o.value.as_deref().map(str::trim).unwrap_or("1");
    if !matches!(v, "0" | "1" | "true" | "false") {
        st.m.bad
            .push((o.at.clone(), format!("allow_file_create: '{v}' is not 0 or 1")));
    }
    Some(Ok(()))
}

/// fio's allow_file_create=0 (filesetup.c: the job's files are opened
/// without O_CREAT, and a job whose file does not exist fails as it sets
/// its files up: "fio: file creation disallowed by allow_file_create=0"):
/// the job runs only on files that exist, as they are. A job fslab would
/// run in files of its own (a directory target) would create them, so it
/// is refused before anything runs, naming the file fio would not create.
pub(super) fn finish(st: &mut State, job: &Job, _fa: &FioArgs) {
    let Some(o) = job.get("allow_file_create") else {
        return;
    };
    let io = matches!(st.m.fio.engine, crate::plan::fio::FioEngine::Io) && st.a.engine != "null";
    if !io || !matches!(o.value.as_deref().map(str::trim), Some("0" | "false")) {
        return;
    }
    let target = Path::new(&st.a.common.target);
    if !std::fs::metadata(target).is_ok_and(|m| m.is_dir()) {
        return;
    }
    // the file fio would have opened: the (first missing) named one, or its JOB.0.0
    let dir = job.get("directory").and_then(|d| d.value.as_deref()).map(names);
    let dir = dir.as_ref().and_then(|d| d.first()).map(String::as_str);
    let named = job.get("filename").and_then(|f| f.value.as_deref()).map(names);
    let file = match named {
        Some(n) => n.iter().map(|n| joined(dir, n)).find(|p| !p.exists()),
        None => Some(joined(dir, &format!("{}.0.0", job.name))),
    };
    let why = match file {
        Some(f) if !f.exists() => format!(
            "allow_file_create=0: {} does not exist, and fio does not create it (fio: \"file creation disallowed by allow_file_create=0\")",
            excerpt(&f.display().to_string())
        ),
        _ => format!(
            "allow_file_create=0: fslab would create the job's files in a directory of its own in {} instead of using fio's (give filename= the existing file)",
            excerpt(&target.display().to_string())
        ),
    };
    st.m.bad.push((o.at.clone(), why));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's get_next_str: `\:` is a colon in a name, empty names are
    /// skipped, blanks at the value's ends are trimmed.
    #[test]
    fn names_split_as_fio_splits_them() {
        assert_eq!(names("a:b:c"), ["a", "b", "c"]);
        assert_eq!(names(" :a::b: "), ["a", "b"]);
        assert_eq!(names(r"a\:b:c"), ["a:b", "c"]);
        assert_eq!(names(r"x\y"), [r"x\y"]);
        assert!(names(" ").is_empty());
        assert_eq!(joined(Some("/d"), "/etc/x"), PathBuf::from("/d//etc/x"));
        assert_eq!(joined(None, "f"), PathBuf::from("f"));
    }
}
