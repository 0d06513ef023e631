//! Plans as a design matrix: `[factors]` turns any workload or
//! `[[filesystem]]` key into a list of levels, and `compare` names the factor
//! whose levels are the comparison's columns (docs/plans.md, "Factors").
//!
//! A factor is expanded here, in the plan layer, before anything runs: every
//! workload table is read once per combination of its factors' levels, and
//! every filesystem table once per combination of its own, each time with
//! the factor's key set to the level's value as written in `[factors]`. So a
//! level is validated by the very code that validates the key in the table
//! (the workload's flags parser, the filesystem reader with its mkfs and
//! mount allow-lists), and its errors name the level's line.

use super::read::{Key, Reader, Val};
use super::*;
use std::borrow::Cow;

/// Which tables a factor's key belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FactorOf {
    /// A `[[filesystem]]` key: every filesystem is made at each level.
    Filesystem,
    /// A workload key: every workload runs at each level.
    Workload,
}

/// One factor of a plan: its name as written in `[factors]` (qualified as
/// `filesystem.KEY` or `workload.KEY` when written so), and its levels as
/// written (a string's text, a number or boolean as in the file).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Factor {
    pub name: String,
    pub of: FactorOf,
    pub levels: Vec<String>,
}

/// What the comparison's columns are (`compare`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compare {
    /// The filesystems (the default): tables per workload, as without factors.
    #[default]
    Filesystem,
    /// The plan's kernels.
    Kernel,
    /// The levels of this factor (its name in `Factor::name`).
    Factor(String),
}

impl Compare {
    /// The compared factor's name as a cell's tag records it: None for the
    /// filesystem, "kernel", or the factor's name.
    pub fn tag(&self) -> Option<String> {
        match self {
            Compare::Filesystem => None,
            Compare::Kernel => Some("kernel".into()),
            Compare::Factor(f) => Some(f.clone()),
        }
    }
}

/// The `[[filesystem]]` keys a factor may set: not name, type, path or
/// device, which say what a filesystem is rather than how it is made.
pub const FS_FACTOR_KEYS: [&str; 10] = [
    "mkfs",
    "mount",
    "size",
    "scheduler",
    "read_ahead_kb",
    "nr_requests",
    "wbt_lat_usec",
    "max_sectors_kb",
    "rotational",
    "loop_direct_io",
];

/// The name of an entry expanded at `levels` ("ext4[scheduler=none]",
/// "replay[xattr=true,bs=4k]"): its identity in cell names, results and a
/// VM guest's `--guest-filesystem` / `--guest-workload`.
pub fn named(base: &str, levels: &[(String, String)]) -> String {
    if levels.is_empty() {
        return base.to_string();
    }
    let l: Vec<String> = levels.iter().map(|(f, v)| format!("{f}={v}")).collect();
    format!("{base}[{}]", l.join(","))
}

/// A key as the workload reader knows it (`lat_buckets` is `lat-buckets`).
fn norm(key: &str) -> String {
    key.replace('_', "-")
}

/// Whether a `kind` workload table accepts `key` (dashed).
fn workload_accepts(kind: &str, key: &str) -> bool {
    if kind == "replay" && key == "loadfile" {
        return true;
    }
    if ["target", "output", "quiet", "help", "type", "name"].contains(&key) {
        return false;
    }
    Cli::command()
        .find_subcommand(kind)
        .is_some_and(|s| s.get_arguments().any(|a| a.get_long() == Some(key) && !a.is_hide_set()))
}

/// A factor as read, with its levels' values for expanding the tables.
pub(super) struct RawFactor<'t, 'i> {
    pub(super) factor: Factor,
    /// The table key it sets (a filesystem key with underscores).
    key: String,
    /// Where its name is in the file.
    at: usize,
    values: Vec<&'t Val<'i>>,
}

/// The top-level keys whose reading waits for the whole file: the tables
/// are expanded by the factors, which may come after them.
#[derive(Default)]
pub(super) struct Deferred<'t, 'i> {
    pub(super) filesystems: Vec<(usize, &'t DeTable<'i>)>,
    pub(super) workloads: Vec<(usize, &'t DeTable<'i>)>,
    pub(super) factors: Option<&'t Val<'i>>,
    /// `compare` as written, and where.
    pub(super) compare: Option<(String, usize)>,
}

/// Every combination of one level per factor, as level indices in the
/// factors' order (the last varies fastest); one empty one without factors.
fn combinations(factors: &[&RawFactor]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for f in factors {
        out = out
            .into_iter()
            .flat_map(|c: Vec<usize>| {
                (0..f.values.len()).map(move |i| {
                    let mut c = c.clone();
                    c.push(i);
                    c
                })
            })
            .collect();
    }
    out
}

/// (factor, level) of one combination.
fn level_pairs(factors: &[&RawFactor], combo: &[usize]) -> Vec<(String, String)> {
    factors
        .iter()
        .zip(combo)
        .map(|(f, &i)| (f.factor.name.clone(), f.factor.levels[i].clone()))
        .collect()
}

/// Table `t` with each factor's key set to its level of `combo`, spanned
/// where the level is written (so errors name its line).
fn with_levels<'i>(t: &DeTable<'i>, factors: &[&RawFactor<'_, 'i>], combo: &[usize]) -> DeTable<'i> {
    let mut t = t.clone();
    for (f, &i) in factors.iter().zip(combo) {
        let v = f.values[i];
        t.insert(Spanned::new(v.span(), Cow::Owned(f.key.clone())), v.clone());
    }
    t
}

impl Reader<'_> {
    /// The `[factors]` table: `KEY = [LEVEL, ...]`, or under `filesystem`
    /// or `workload` (`filesystem.size = [...]`) for a key both tables know.
    pub(super) fn factors<'t, 'i>(
        &self,
        v: &'t Val<'i>,
        workloads: &[(usize, &DeTable)],
    ) -> Result<Vec<RawFactor<'t, 'i>>> {
        let DeValue::Table(t) = v.get_ref() else {
            return Err(self.err_at(
                v.span().start,
                format!(
                    "factors must be a table ([factors]) of KEY = [LEVEL, ...], not {}",
                    v.get_ref().type_str()
                ),
            ));
        };
        let mut out: Vec<RawFactor> = Vec::new();
        for (k, v) in t {
            match (k.get_ref().as_ref(), v.get_ref()) {
                (q @ ("filesystem" | "workload"), DeValue::Table(inner)) => {
                    for (k2, v2) in inner {
                        out.push(self.factor(k2, v2, Some(q), workloads)?);
                    }
                }
                _ => out.push(self.factor(k, v, None, workloads)?),
            }
        }
        for (i, f) in out.iter().enumerate() {
            if out[..i]
                .iter()
                .any(|g| g.factor.of == f.factor.of && norm(&g.key) == norm(&f.key))
            {
                return Err(self.err_at(f.at, format!("two factors set '{}': give one", f.key)));
            }
        }
        Ok(out)
    }

    /// One factor: at least two distinct levels of a key of the
    /// filesystems or of every workload.
    fn factor<'t, 'i>(
        &self,
        k: &'t Key<'i>,
        v: &'t Val<'i>,
        qualifier: Option<&str>,
        workloads: &[(usize, &DeTable)],
    ) -> Result<RawFactor<'t, 'i>> {
        let written = k.get_ref().to_string();
        let name = match qualifier {
            Some(q) => format!("{q}.{written}"),
            None => written.clone(),
        };
        let at = k.span().start;
        let DeValue::Array(a) = v.get_ref() else {
            return Err(self.err_at(
                v.span().start,
                format!(
                    "factor '{name}' must be a list of its levels ([a, b, ...]), not {}",
                    v.get_ref().type_str()
                ),
            ));
        };
        if a.len() < 2 {
            return Err(self.err_at(
                v.span().start,
                format!("factor '{name}' needs at least 2 levels, not {}", a.len()),
            ));
        }
        let (mut levels, mut values) = (Vec::new(), Vec::new());
        for x in a.iter() {
            let l = self.level_text(x);
            if levels.contains(&l) {
                return Err(self.err_at(x.span().start, format!("factor '{name}': level '{l}' is given twice")));
            }
            levels.push(l);
            values.push(x);
        }
        let (of, key) = self.factor_of(&name, &written, qualifier, at, workloads)?;
        Ok(RawFactor {
            factor: Factor { name, of, levels },
            key,
            at,
            values,
        })
    }

    /// A level as the tables and columns name it: a string's text, a
    /// number or boolean as written, anything else as its TOML text.
    fn level_text(&self, x: &Val) -> String {
        match x.get_ref() {
            DeValue::String(s) => s.to_string(),
            DeValue::Integer(i) => i.as_str().to_string(),
            DeValue::Float(f) => f.as_str().to_string(),
            DeValue::Boolean(b) => b.to_string(),
            _ => self.text.get(x.span()).unwrap_or_default().trim().to_string(),
        }
    }

    /// Which tables factor `name` (key `written`) expands, and the key it
    /// sets in them: a `[[filesystem]]` key, or a key every workload table
    /// accepts; one both know needs its qualifier.
    fn factor_of(
        &self,
        name: &str,
        written: &str,
        qualifier: Option<&str>,
        at: usize,
        workloads: &[(usize, &DeTable)],
    ) -> Result<(FactorOf, String)> {
        let fs_key = written.replace('-', "_");
        let is_fs = FS_FACTOR_KEYS.contains(&fs_key.as_str());
        let wl_key = norm(written);
        // (name, kind, where) of each workload with a known type; the
        // others are refused when their table is read
        let kinds: Vec<(String, String, usize)> = workloads
            .iter()
            .enumerate()
            .filter_map(|(i, (wat, t))| {
                let kind = t.get("type").and_then(|v| v.get_ref().as_str())?.to_string();
                let wname = t.get("name").and_then(|v| v.get_ref().as_str()).map(str::to_string);
                Some((wname.unwrap_or_else(|| format!("{kind}{}", i + 1)), kind, *wat))
            })
            .filter(|(_, kind, _)| ["io", "meta", "replay", "probe"].contains(&kind.as_str()))
            .collect();
        let any_wl = kinds.iter().any(|(_, kind, _)| workload_accepts(kind, &wl_key));
        let every_wl = || -> Result<(FactorOf, String)> {
            if let Some((wname, kind, _)) = kinds.iter().find(|(_, kind, _)| !workload_accepts(kind, &wl_key)) {
                return Err(self.err_at(
                    at,
                    format!(
                        "factor '{name}': the {kind} workload '{wname}' has no key '{written}' (every workload runs at each level of a workload factor)"
                    ),
                ));
            }
            Ok((FactorOf::Workload, written.to_string()))
        };
        let fs_keys = FS_FACTOR_KEYS.join(", ");
        match qualifier {
            Some("filesystem") if is_fs => Ok((FactorOf::Filesystem, fs_key)),
            Some("filesystem") => Err(self.err_at(
                at,
                format!("factor '{name}': '{written}' is not a [[filesystem]] key a factor may set ({fs_keys})"),
            )),
            Some(_) if any_wl => every_wl(),
            Some(_) => Err(self.err_at(at, format!("factor '{name}': no workload of the plan has a key '{written}'"))),
            None if is_fs && any_wl => Err(self.err_at(
                at,
                format!(
                    "factor '{name}' is a key of both [[filesystem]] and the workloads: write filesystem.{written} or workload.{written}"
                ),
            )),
            None if is_fs => Ok((FactorOf::Filesystem, fs_key)),
            None if any_wl => every_wl(),
            None => Err(self.err_at(
                at,
                format!(
                    "factor '{name}' is neither a key of the plan's workloads nor a [[filesystem]] key a factor may set ({fs_keys})"
                ),
            )),
        }
    }

    /// Refuses a table that sets a key one of `factors` sets.
    fn no_factor_key(&self, t: &DeTable, factors: &[&RawFactor]) -> Result<()> {
        for (k, _) in t {
            let key = norm(k.get_ref());
            if let Some(f) = factors.iter().find(|f| norm(&f.key) == key) {
                return Err(self.err_at(
                    k.span().start,
                    format!(
                        "{} is also a factor ([factors], line {}): set it in one place, not both",
                        k.get_ref(),
                        read::line_of(self.text, f.at)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Every filesystem table at every combination of the filesystem factors' levels.
    pub(super) fn expand_filesystems(
        &self,
        tables: &[(usize, &DeTable)],
        factors: &[RawFactor],
    ) -> Result<Vec<FsPlan>> {
        let mine: Vec<&RawFactor> = factors.iter().filter(|f| f.factor.of == FactorOf::Filesystem).collect();
        let mut out = Vec::new();
        for (at, t) in tables {
            self.no_factor_key(t, &mine)?;
            for combo in combinations(&mine) {
                let mut f = self.filesystem(*at, &with_levels(t, &mine, &combo))?;
                f.levels = level_pairs(&mine, &combo);
                f.name = named(&f.base, &f.levels);
                out.push(f);
            }
        }
        Ok(out)
    }

    /// Every workload table at every combination of the workload factors' levels.
    pub(super) fn expand_workloads(
        &self,
        tables: &[(usize, &DeTable)],
        factors: &[RawFactor],
    ) -> Result<Vec<WorkloadPlan>> {
        let mine: Vec<&RawFactor> = factors.iter().filter(|f| f.factor.of == FactorOf::Workload).collect();
        let mut out = Vec::new();
        for (i, (at, t)) in tables.iter().enumerate() {
            self.no_factor_key(t, &mine)?;
            for combo in combinations(&mine) {
                let mut w = self.workload(*at, &with_levels(t, &mine, &combo), i)?;
                w.levels = level_pairs(&mine, &combo);
                w.name = named(&w.base, &w.levels);
                out.push(w);
            }
        }
        Ok(out)
    }
}

impl LabPlan {
    /// `compare` and `baseline` against the plan: the compared axis exists
    /// and the baseline is one of its levels (a filesystem, a kernel, a
    /// factor's level).
    pub(super) fn check_compare(
        &mut self,
        r: &Reader,
        compare: Option<(String, usize)>,
        baseline_at: usize,
    ) -> Result<()> {
        let compare_at = compare.as_ref().map(|c| c.1).unwrap_or(0);
        self.compare = match compare.as_ref().map(|c| c.0.as_str()) {
            None | Some("filesystem") => Compare::Filesystem,
            Some("kernel") if self.kernels.is_empty() => {
                return Err(r.err_at(compare_at, "compare = \"kernel\" needs the plan's kernels = [...]"))
            }
            Some("kernel") => Compare::Kernel,
            Some(c) => match self.factors.iter().find(|f| norm(&f.name) == norm(c)) {
                Some(f) => Compare::Factor(f.name.clone()),
                None => {
                    let mut known = vec!["filesystem".to_string(), "kernel".to_string()];
                    known.extend(self.factors.iter().map(|f| f.name.clone()));
                    return Err(r.err_at(
                        compare_at,
                        format!("compare '{c}' names no factor of the plan ({})", known.join(", ")),
                    ));
                }
            },
        };
        let Some(b) = &self.baseline else { return Ok(()) };
        let (what, levels): (String, Vec<String>) = match &self.compare {
            Compare::Filesystem => {
                let mut names: Vec<String> = Vec::new();
                for f in &self.filesystems {
                    if !names.contains(&f.base) {
                        names.push(f.base.clone());
                    }
                }
                ("a filesystem of the plan".into(), names)
            }
            Compare::Kernel => (
                "a kernel of the plan".into(),
                self.kernels.iter().map(|k| k.name.clone()).collect(),
            ),
            Compare::Factor(n) => (
                format!("a level of factor '{n}'"),
                self.factors
                    .iter()
                    .find(|f| &f.name == n)
                    .map(|f| f.levels.clone())
                    .unwrap_or_default(),
            ),
        };
        if !levels.contains(b) {
            return Err(r.err_at(
                baseline_at,
                format!("baseline '{b}' is not {what} ({})", levels.join(", ")),
            ));
        }
        Ok(())
    }
}

/// `names` in order, each once.
fn distinct<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

impl LabPlan {
    /// The baseline level of the compared axis: the plan's, else the first
    /// filesystem's table, kernel or level of the compared factor.
    pub fn baseline_level(&self) -> Option<String> {
        if let Some(b) = &self.baseline {
            return Some(b.clone());
        }
        match &self.compare {
            Compare::Filesystem => self.filesystems.first().map(|f| f.base.clone()),
            Compare::Kernel => self.kernels.first().map(|k| k.name.clone()),
            Compare::Factor(n) => self.factors.iter().find(|f| &f.name == n)?.levels.first().cloned(),
        }
    }

    /// The `[[filesystem]]` tables' names in plan order (an expanded table
    /// is several entries).
    pub fn filesystem_tables(&self) -> Vec<String> {
        distinct(self.filesystems.iter().map(|f| &f.base))
    }

    /// The `[[workload]]` tables' names in plan order.
    pub fn workload_tables(&self) -> Vec<String> {
        distinct(self.workloads.iter().map(|w| &w.base))
    }

    /// The level of each factor of the plan (in `[factors]` order) that a
    /// cell of workload `w` on filesystem `fs` runs at.
    pub fn levels_of<'a>(&'a self, fs: &'a FsPlan, w: &'a WorkloadPlan) -> impl Iterator<Item = (&'a Factor, &'a str)> {
        self.factors.iter().filter_map(move |f| {
            let of = match f.of {
                FactorOf::Filesystem => &fs.levels,
                FactorOf::Workload => &w.levels,
            };
            of.iter().find(|(n, _)| *n == f.name).map(|(_, l)| (f, l.as_str()))
        })
    }
}
