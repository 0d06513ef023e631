//! Reading a plan file's tables: each `[[filesystem]]` and `[[workload]]`,
//! every error naming the file and line of the offending key.

use super::*;

/// Line (1-based) of a byte offset.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

/// Parses plan files, remembering the file's name and text for error lines.
pub(super) struct Reader<'a> {
    pub(super) file: String,
    pub(super) text: &'a str,
    pub(super) base: PathBuf,
}

pub(super) type Key<'i> = Spanned<std::borrow::Cow<'i, str>>;
pub(super) type Val<'i> = Spanned<DeValue<'i>>;

/// A `[[filesystem]]` table's keys as read, with where the ones checked
/// together later are (offsets, for errors).
struct FsKeys {
    name: Option<String>,
    ty: Option<(String, usize)>,
    mkfs: Vec<String>,
    mkfs_at: Vec<usize>,
    mount: Option<String>,
    mount_at: usize,
    size: u64,
    path: Option<(PathBuf, usize)>,
    device: Option<PathBuf>,
    queue: QueueSettings,
    loop_dio: Option<(bool, usize)>,
    queue_at: Option<usize>,
}

impl<'a> Reader<'a> {
    /// A refusal at `offset`'s line; what it quotes between `'` is cut short
    /// (`units::bound_quoted`), whichever key's check quotes it.
    pub(super) fn err_at(&self, offset: usize, msg: impl std::fmt::Display) -> PlanError {
        PlanError::new(
            format!("{}:{}", self.file, line_of(self.text, offset)),
            crate::units::bound_quoted(&msg.to_string()),
        )
    }

    pub(super) fn string(&self, k: &Key, v: &Val) -> Result<String> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(self.err_at(
                v.span().start,
                format!("{} must be a string, not {}", k.get_ref(), other.type_str()),
            )),
        }
    }

    /// A size as a string ("4g") or a number of bytes.
    pub(super) fn size(&self, k: &Key, v: &Val) -> Result<u64> {
        let text = match v.get_ref() {
            DeValue::Integer(i) => i.as_str().to_string(),
            _ => self.string(k, v)?,
        };
        units::parse_size(&text).map_err(|e| self.err_at(v.span().start, format!("{}: {e}", k.get_ref())))
    }

    pub(super) fn bool(&self, k: &Key, v: &Val) -> Result<bool> {
        v.get_ref().as_bool().ok_or_else(|| {
            self.err_at(
                v.span().start,
                format!("{} must be true or false, not {}", k.get_ref(), v.get_ref().type_str()),
            )
        })
    }

    /// `repeat = 5`, or `repeat = { min = 3, max = 30, target = "2%" }`.
    pub(super) fn repeats(&self, v: &Val) -> Result<Repeats> {
        let whole = |v: &Val, what: &str| {
            match v.get_ref() {
                DeValue::Integer(i) => i.as_str().parse::<u32>().ok().filter(|n| (1..=MAX_REPEATS).contains(n)),
                _ => None,
            }
            .ok_or_else(|| {
                self.err_at(
                    v.span().start,
                    format!("{what} must be a whole number from 1 to {MAX_REPEATS}"),
                )
            })
        };
        let t = match v.get_ref() {
            DeValue::Table(t) => t,
            _ => return Ok(Repeats::fixed(whole(v, "repeat")?)),
        };
        let (mut min, mut max, mut target) = (None, None, DEFAULT_TARGET);
        for (k, x) in t.iter() {
            match k.get_ref().as_ref() {
                "min" => min = Some(whole(x, "repeat.min")?),
                "max" => max = Some(whole(x, "repeat.max")?),
                "target" => {
                    let s = match x.get_ref() {
                        DeValue::String(s) => s.to_string(),
                        DeValue::Integer(i) => i.as_str().to_string(),
                        DeValue::Float(f) => f.as_str().to_string(),
                        o => {
                            return Err(self.err_at(
                                x.span().start,
                                format!("repeat.target must be a percentage (\"2%\"), not {}", o.type_str()),
                            ))
                        }
                    };
                    target =
                        parse_target(&s).map_err(|e| self.err_at(x.span().start, format!("repeat.target: {e}")))?;
                }
                other => {
                    return Err(self.err_at(
                        k.span().start,
                        format!(
                            "unknown key 'repeat.{}' (known: min, max, target)",
                            other.escape_debug()
                        ),
                    ))
                }
            }
        }
        let (min, max) = match (min, max) {
            (Some(a), Some(b)) => (a, b),
            (Some(a), None) => (a, a.max(30)),
            (None, Some(b)) => (3.min(b), b),
            (None, None) => (3, 30),
        };
        Repeats::range(min, max, target).map_err(|e| self.err_at(v.span().start, format!("repeat: {e}")))
    }

    /// A path relative to the plan file's directory.
    pub(super) fn path(&self, k: &Key, v: &Val) -> Result<PathBuf> {
        Ok(self.base.join(self.string(k, v)?))
    }

    /// Array of tables under `key` (`[[filesystem]]`).
    pub(super) fn tables<'t, 'i>(&self, k: &Key<'i>, v: &'t Val<'i>) -> Result<Vec<(usize, &'t DeTable<'i>)>> {
        match v.get_ref() {
            DeValue::Array(a) => a
                .iter()
                .map(|t| match t.get_ref() {
                    DeValue::Table(tab) => Ok((t.span().start, tab)),
                    o => Err(self.err_at(
                        t.span().start,
                        format!("each {} must be a table, not {}", k.get_ref(), o.type_str()),
                    )),
                })
                .collect(),
            DeValue::Table(t) => Ok(vec![(v.span().start, t)]),
            o => Err(self.err_at(
                v.span().start,
                format!(
                    "{} must be a list of tables ([[{}]]), not {}",
                    k.get_ref(),
                    k.get_ref(),
                    o.type_str()
                ),
            )),
        }
    }

    /// One `[[filesystem]]` table: its keys (`fs_keys`), then the checks of
    /// how they go together (mkfs and mount options, queue settings, size).
    pub(super) fn filesystem(&self, at: usize, t: &DeTable) -> Result<FsPlan> {
        let FsKeys {
            name,
            ty,
            mkfs,
            mkfs_at,
            mount,
            mount_at,
            size,
            path,
            device,
            queue,
            loop_dio,
            queue_at,
        } = self.fs_keys(at, t)?;
        let Some((ty, ty_at)) = ty else {
            return Err(self.err_at(at, "[[filesystem]] needs a type: ext4, xfs, btrfs, tmpfs, dir or raw"));
        };
        let kind = self.fs_kind(at, &ty, ty_at, device, path)?;
        if !mkfs.is_empty() && !matches!(kind, FsKind::Mkfs { .. }) {
            return Err(self.err_at(at, format!("mkfs arguments given for a filesystem of type {ty}")));
        }
        // nothing in them may name a device or file fslab did not check
        fsopts::check_mkfs(&ty, &mkfs).map_err(|e| self.err_at(mkfs_at.get(e.word).copied().unwrap_or(at), e.msg))?;
        if let Some(m) = &mount {
            fsopts::check_mount(&ty, m).map_err(|e| self.err_at(mount_at, e))?;
        }
        if let Some(at) = queue_at {
            if !matches!(kind, FsKind::Mkfs { .. } | FsKind::Raw { .. }) {
                return Err(self.err_at(
                    at,
                    format!("block-queue settings need a block device under the cell, and type {ty} has none"),
                ));
            }
        }
        if let Some((_, at)) = loop_dio {
            let own_loop = match &kind {
                FsKind::Mkfs { device, .. } | FsKind::Raw { device } => device.is_none(),
                _ => false,
            };
            if !own_loop {
                return Err(self.err_at(
                    at,
                    format!("loop_direct_io: applies to the loop device fslab makes, and this {ty} has none (device or type)"),
                ));
            }
        }
        if size < 64 << 20 {
            return Err(self.err_at(at, "size must be at least 64m"));
        }
        let name = name.unwrap_or_else(|| ty.clone());
        Ok(FsPlan {
            base: name.clone(),
            name,
            levels: Vec::new(),
            kind,
            mkfs,
            mount,
            size,
            queue,
            loop_direct_io: loop_dio.map(|d| d.0),
            queue_at: queue_at.map(|at| format!("{}:{}", self.file, line_of(self.text, at))),
        })
    }

    /// The keys of one `[[filesystem]]` table, checked one by one (a table
    /// of the keys); `filesystem` checks how they go together.
    fn fs_keys(&self, at: usize, t: &DeTable) -> Result<FsKeys> {
        let (mut name, mut ty, mut mkfs, mut mount, mut size, mut path, mut device) =
            (None, None, Vec::new(), None, DEFAULT_FS_SIZE, None, None);
        // where each mkfs word and the mount options are, for errors
        let (mut mkfs_at, mut mount_at): (Vec<usize>, usize) = (Vec::new(), at);
        let (mut queue, mut loop_dio, mut queue_at) = (QueueSettings::default(), None, None);
        for (k, v) in t {
            match k.get_ref().as_ref() {
                "name" => name = Some(self.string(k, v)?),
                "type" => ty = Some((self.string(k, v)?, v.span().start)),
                "mkfs" => {
                    (mkfs, mkfs_at) = match v.get_ref() {
                        DeValue::Array(a) => a
                            .iter()
                            .map(|x| Ok((self.string(k, x)?, x.span().start)))
                            .collect::<Result<Vec<_>>>()?
                            .into_iter()
                            .unzip(),
                        _ => self
                            .string(k, v)?
                            .split_whitespace()
                            .map(|w| (w.to_string(), v.span().start))
                            .unzip(),
                    }
                }
                "mount" => {
                    mount = Some(self.string(k, v)?).filter(|m| !m.is_empty());
                    mount_at = v.span().start;
                }
                "size" => size = self.size(k, v)?,
                "path" => path = Some((self.path(k, v)?, v.span().start)),
                "device" => device = Some(self.path(k, v)?),
                "scheduler" => {
                    let s = self.string(k, v)?;
                    if !SCHEDULERS.contains(&s.as_str()) {
                        return Err(self.err_at(
                            v.span().start,
                            format!(
                                "scheduler: unknown '{}' (known: {})",
                                s.escape_debug(),
                                SCHEDULERS.join(", ")
                            ),
                        ));
                    }
                    queue.scheduler = Some(s);
                }
                "read_ahead_kb" => queue.read_ahead_kb = Some(self.count(k, v, 0)?),
                "nr_requests" => queue.nr_requests = Some(self.count(k, v, 4)?),
                "wbt_lat_usec" => queue.wbt_lat_usec = Some(self.count(k, v, 0)?),
                "max_sectors_kb" => queue.max_sectors_kb = Some(self.count(k, v, 4)?),
                "rotational" => queue.rotational = Some(self.bool(k, v)?),
                "loop_direct_io" => loop_dio = Some((self.bool(k, v)?, k.span().start)),
                other => {
                    return Err(self.err_at(
                        k.span().start,
                        format!(
                            "unknown key '{}' in [[filesystem]] (known: name, type, mkfs, mount, size, path, \
                             device, {}, loop_direct_io)",
                            other.escape_debug(),
                            QUEUE_ORDER.join(", ")
                        ),
                    ))
                }
            }
            if QUEUE_ORDER.contains(&k.get_ref().as_ref()) {
                queue_at.get_or_insert(k.span().start);
            }
        }
        Ok(FsKeys {
            name,
            ty,
            mkfs,
            mkfs_at,
            mount,
            mount_at,
            size,
            path,
            device,
            queue,
            loop_dio,
            queue_at,
        })
    }

    /// What a filesystem of type `ty` is made on: a `device` for mkfs and
    /// raw, a `path` (checked) for dir.
    fn fs_kind(
        &self,
        at: usize,
        ty: &str,
        ty_at: usize,
        device: Option<PathBuf>,
        path: Option<(PathBuf, usize)>,
    ) -> Result<FsKind> {
        Ok(match ty {
            t if MKFS_TYPES.contains(&t) => FsKind::Mkfs {
                fs_type: t.to_string(),
                device,
            },
            "tmpfs" => FsKind::Tmpfs,
            "raw" => FsKind::Raw { device },
            "dir" => {
                let (path, path_at) =
                    path.ok_or_else(|| self.err_at(at, "a filesystem of type dir needs path = \"DIR\""))?;
                if let Some(why) = crate::plan::dir_target_problem(&path) {
                    return Err(self.err_at(path_at, format!("path: {why}")));
                }
                FsKind::Dir { path }
            }
            t => {
                return Err(self.err_at(
                    ty_at,
                    format!(
                        "unknown filesystem type '{}' (known: {}, tmpfs, dir, raw)",
                        t.escape_debug(),
                        MKFS_TYPES.join(", ")
                    ),
                ))
            }
        })
    }

    /// A whole number of at least `min` (a block-queue setting).
    pub(super) fn count(&self, k: &Key, v: &Val, min: u64) -> Result<u64> {
        match v.get_ref() {
            DeValue::Integer(i) => match i.as_str().parse::<u64>() {
                Ok(n) if n >= min => Ok(n),
                _ => Err(self.err_at(
                    v.span().start,
                    format!(
                        "{} must be a whole number of at least {min}, not {}",
                        k.get_ref(),
                        i.as_str()
                    ),
                )),
            },
            o => Err(self.err_at(
                v.span().start,
                format!("{} must be a number, not {}", k.get_ref(), o.type_str()),
            )),
        }
    }

    pub(super) fn workload(&self, at: usize, t: &DeTable, index: usize) -> Result<WorkloadPlan> {
        let mut kind = None;
        let mut name = None;
        for (k, v) in t {
            match k.get_ref().as_ref() {
                "type" => kind = Some((self.string(k, v)?, v.span().start)),
                "name" => name = Some(self.string(k, v)?),
                _ => {}
            }
        }
        let Some((kind, kind_at)) = kind else {
            return Err(self.err_at(at, "[[workload]] needs a type: io, meta, replay or probe"));
        };
        if !["io", "meta", "replay", "probe"].contains(&kind.as_str()) {
            return Err(self.err_at(
                kind_at,
                format!(
                    "unknown workload type '{}' (known: io, meta, replay, probe)",
                    kind.escape_debug()
                ),
            ));
        }
        let cmd = Cli::command();
        let sub = cmd.find_subcommand(&kind).expect("workload commands exist");
        let mut args = Vec::new();
        let mut loadfile = None;
        // (flag, line) for mapping the plan's errors back to a line
        let mut lines: Vec<(String, usize)> = Vec::new();
        for (k, v) in t {
            let key = k.get_ref().replace('_', "-");
            let at = k.span().start;
            match key.as_str() {
                "type" | "name" => continue,
                "loadfile" if kind == "replay" => {
                    loadfile = Some(self.path(k, v)?.display().to_string());
                    lines.push(("LOADFILE".into(), at));
                    continue;
                }
                "target" => return Err(self.err_at(at, "target is set by each [[filesystem]], not by the workload")),
                "output" | "quiet" => {
                    return Err(self.err_at(
                        at,
                        format!("{key} applies to the whole run: give it to `fslab run` (--{key})"),
                    ))
                }
                _ => {}
            }
            self.push_arg(sub, &kind, k, v, &key, &mut args, &mut lines)?;
        }
        if kind == "replay" {
            let Some(lf) = loadfile else {
                return Err(self.err_at(at, "a replay workload needs loadfile = \"PATH\""));
            };
            args.insert(0, lf);
        }
        let plan = self.cell_plan(&kind, &args, &lines, at)?;
        let name = name.unwrap_or_else(|| format!("{kind}{}", index + 1));
        Ok(WorkloadPlan {
            base: name.clone(),
            name,
            levels: Vec::new(),
            kind,
            args,
            plan,
        })
    }

    /// One key of a workload table as the argument(s) of its command's flag.
    #[allow(clippy::too_many_arguments)]
    fn push_arg(
        &self,
        sub: &clap::Command,
        kind: &str,
        k: &Key,
        v: &Val,
        key: &str,
        args: &mut Vec<String>,
        lines: &mut Vec<(String, usize)>,
    ) -> Result<()> {
        let at = k.span().start;
        let Some(arg) = sub
            .get_arguments()
            .find(|a| a.get_long() == Some(key) && !a.is_hide_set())
        else {
            let mut known: Vec<_> = sub
                .get_arguments()
                .filter_map(|a| a.get_long())
                .filter(|l| !["target", "output", "quiet", "help"].contains(l))
                .collect();
            if kind == "replay" {
                known.push("loadfile");
            }
            return Err(self.err_at(
                at,
                format!(
                    "unknown key '{}' for a {kind} workload (known: {})",
                    k.get_ref(),
                    known.join(", ")
                ),
            ));
        };
        let flag = format!("--{key}");
        lines.push((flag.clone(), at));
        let takes_value = arg.get_action().takes_values();
        let scalar = |v: &Val| -> Result<String> {
            match v.get_ref() {
                DeValue::String(s) => Ok(s.to_string()),
                DeValue::Integer(i) => Ok(i.as_str().to_string()),
                DeValue::Float(f) => Ok(f.as_str().to_string()),
                o => Err(self.err_at(
                    v.span().start,
                    format!("{}: expected a string or number, not {}", k.get_ref(), o.type_str()),
                )),
            }
        };
        match (v.get_ref(), takes_value) {
            (DeValue::Boolean(b), false) => {
                if *b {
                    args.push(flag);
                }
            }
            (_, false) => {
                return Err(self.err_at(at, format!("{} is a switch: write {} = true", k.get_ref(), k.get_ref())))
            }
            (DeValue::Array(a), true) => {
                for x in a.iter() {
                    args.push(flag.clone());
                    args.push(scalar(x)?);
                }
            }
            (_, true) => {
                args.push(flag);
                args.push(scalar(v)?);
            }
        }
        Ok(())
    }

    /// The workload's plan, validated by its command's own code; errors
    /// point at the line of the key they are about.
    fn cell_plan(&self, kind: &str, args: &[String], lines: &[(String, usize)], at: usize) -> Result<CellPlan> {
        let line_for = |flag: &str| lines.iter().find(|(f, _)| f == flag).map(|(_, at)| *at).unwrap_or(at);
        workload_from_args(kind, args).map_err(|e| match e {
            WorkloadError::Usage(m) => self.err_at(at, m),
            WorkloadError::Plan(p) => {
                // "--bs" -> the line of `bs = ...`; file:line errors of load files pass through
                let key = p.flag.trim_start_matches("--");
                if p.flag.contains(':') {
                    p
                } else {
                    self.err_at(line_for(&p.flag), format!("{key}: {}", p.msg))
                }
            }
        })
    }
}
