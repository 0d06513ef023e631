//! Reading a plan file into a `LabPlan`: the top-level keys (one table of
//! them), the telemetry keys applied once all are read, and the checks that
//! need the whole plan (names distinct, the baseline one of the
//! filesystems). The `[[filesystem]]` and `[[workload]]` tables are read by
//! `read`.

use super::factors::Deferred;
use super::read::{Key, Reader, Val};
use super::*;

impl LabPlan {
    /// Reads and validates a plan file; `a` carries the run's common flags.
    pub fn from_file(path: &str, a: &RunArgs) -> Result<LabPlan> {
        let text = crate::plan::read_regular_file(Path::new(path), "PLAN", crate::plan::MAX_PLAN_BYTES)?;
        let mut lab = Self::parse(path, &text)?;
        lab.apply_run_args(a)?;
        Ok(lab)
    }

    /// Parses plan text; `file` names it in errors and anchors relative paths.
    pub fn parse(file: &str, text: &str) -> Result<LabPlan> {
        let base = Path::new(file).parent().map(Path::to_path_buf).unwrap_or_default();
        let r = Reader {
            file: file.to_string(),
            text,
            base,
        };
        let doc = DeTable::parse(text).map_err(|e| {
            let at = e.span().map(|s| s.start).unwrap_or(0);
            r.err_at(at, e.message().trim())
        })?;
        let mut lab = LabPlan::empty(file);
        let mut baseline_at = 0;
        let mut keys = PlanTelemetryKeys::default();
        let mut d = Deferred::default();
        for (k, v) in doc.get_ref() {
            lab.top_key(&r, k, v, &mut keys, &mut baseline_at, &mut d)?;
        }
        lab.apply_telemetry_keys(&r, &keys)?;
        lab.read_tables(&r, &d)?;
        lab.check_whole(&r, text)?;
        lab.check_compare(&r, d.compare, baseline_at)?;
        Ok(lab)
    }

    /// A plan with every key at its default, read from `file`.
    fn empty(file: &str) -> LabPlan {
        LabPlan {
            name: Path::new(file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            file: Some(PathBuf::from(file)),
            repeat: Repeats::fixed(3),
            baseline: None,
            compare: Compare::Filesystem,
            factors: Vec::new(),
            fresh: true,
            drop_caches: true,
            scratch_dir: PathBuf::from(DEFAULT_SCRATCH_DIR),
            filesystems: Vec::new(),
            workloads: Vec::new(),
            quiet_warnings: false,
            telemetry: TelemetryPlan::default(),
            retry_disturbed: 0,
            kernels: Vec::new(),
            vm: VmPlan::default(),
            guest_args: Vec::new(),
            guest_files: Vec::new(),
            in_guest: false,
        }
    }

    /// One top-level key of the plan file: a table of the keys (telemetry
    /// keys are kept in `keys`, the baseline's offset in `baseline_at`, the
    /// tables and factors in `d` until all keys are read).
    fn top_key<'t, 'i>(
        &mut self,
        r: &Reader,
        k: &'t Key<'i>,
        v: &'t Val<'i>,
        keys: &mut PlanTelemetryKeys,
        baseline_at: &mut usize,
        d: &mut Deferred<'t, 'i>,
    ) -> Result<()> {
        match k.get_ref().replace('_', "-").as_str() {
        "name" => self.name = r.string(k, v)?,
        "description" => {
            r.string(k, v)?;
        }
        "repeat" => self.repeat = r.repeats(v)?,
        "baseline" => {
            self.baseline = Some(r.string(k, v)?);
            *baseline_at = v.span().start;
        }
        "fresh" => self.fresh = r.bool(k, v)?,
        "quiet-warnings" => self.quiet_warnings = r.bool(k, v)?,
        "drop-caches" => self.drop_caches = r.bool(k, v)?,
        "scratch-dir" => self.scratch_dir = r.path(k, v)?,
        "telemetry" => keys.telemetry = Some(r.bool(k, v)?),
        "profile" => keys.profile = Some(r.bool(k, v)?),
        "disturbed-cpu" => {
            let pct = match v.get_ref() {
                DeValue::Integer(i) => i.as_str().parse::<f64>().ok(),
                DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
                DeValue::String(s) => s.trim_end_matches('%').parse::<f64>().ok(),
                _ => None,
            }
            .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| r.err_at(v.span().start, "disturbed-cpu must be a percentage in (0, 100]"))?;
            keys.disturbed_cpu = Some(pct);
        }
        "retry-disturbed" => {
            keys.retry_disturbed = Some(
                match v.get_ref() {
                    DeValue::Integer(i) => i.as_str().parse().ok().filter(|&n| n <= MAX_RETRY_DISTURBED),
                    _ => None,
                }
                .ok_or_else(|| {
                    r.err_at(
                        v.span().start,
                        format!("retry-disturbed must be a whole number from 0 to {MAX_RETRY_DISTURBED}"),
                    )
                })?,
            )
        }
        "kernels" => self.kernels = r.kernels(k, v)?,
        "vm" => self.vm = r.vm(v)?,
        "compare" => d.compare = Some((r.string(k, v)?, v.span().start)),
        "factors" => d.factors = Some(v),
        "filesystem" => d.filesystems = r.tables(k, v)?,
        "workload" => d.workloads = r.tables(k, v)?,
        other => {
            return Err(r.err_at(
                k.span().start,
                format!("unknown key '{}' (known: name, description, repeat, baseline, compare, fresh, drop-caches, scratch-dir, quiet-warnings, telemetry, profile, disturbed-cpu, retry-disturbed, kernels, [vm], [factors], [[filesystem]], [[workload]])", other.escape_debug()),
            ))
        }
    }
        Ok(())
    }

    /// The plan's telemetry keys, once all keys are read (they may come in
    /// any order).
    fn apply_telemetry_keys(&mut self, r: &Reader, keys: &PlanTelemetryKeys) -> Result<()> {
        if keys.profile == Some(true) && keys.telemetry == Some(false) {
            return Err(r.err_at(0, "profile = true cannot be combined with telemetry = false"));
        }
        if let Some(t) = keys.telemetry {
            self.telemetry.enabled = t;
        }
        if let Some(p) = keys.profile {
            self.telemetry.profile = p;
        }
        if let Some(p) = keys.disturbed_cpu {
            self.telemetry.disturbed_cpu_pct = p;
        }
        if let Some(n) = keys.retry_disturbed {
            self.retry_disturbed = n;
        }
        Ok(())
    }

    /// The `[[filesystem]]` and `[[workload]]` tables, each expanded over
    /// the `[factors]` of its kind (`factors`).
    fn read_tables(&mut self, r: &Reader, d: &Deferred) -> Result<()> {
        // a workload without a known type is refused as such before the
        // factors ask which keys it takes
        for (i, (at, t)) in d.workloads.iter().enumerate() {
            let kind = t.get("type").and_then(|v| v.get_ref().as_str());
            if !kind.is_some_and(|k| ["io", "meta", "replay", "probe"].contains(&k)) {
                r.workload(*at, t, i)?;
            }
        }
        let factors = match d.factors {
            Some(v) => r.factors(v, &d.workloads)?,
            None => Vec::new(),
        };
        self.filesystems = r.expand_filesystems(&d.filesystems, &factors)?;
        self.workloads = r.expand_workloads(&d.workloads, &factors)?;
        self.factors = factors.into_iter().map(|f| f.factor).collect();
        Ok(())
    }

    /// The checks that need the whole plan: at least one filesystem and
    /// workload, distinct names (the baseline: `check_compare`).
    fn check_whole(&self, r: &Reader, text: &str) -> Result<()> {
        if self.filesystems.is_empty() {
            return Err(r.err_at(text.len(), "the plan has no [[filesystem]]"));
        }
        if self.workloads.is_empty() {
            return Err(r.err_at(text.len(), "the plan has no [[workload]]"));
        }
        for (i, f) in self.filesystems.iter().enumerate() {
            if self.filesystems[..i].iter().any(|g| g.name == f.name) {
                return Err(r.err_at(
                    0,
                    format!("two filesystems are named '{}': give each a distinct name", f.name),
                ));
            }
        }
        for (i, w) in self.workloads.iter().enumerate() {
            if self.workloads[..i].iter().any(|g| g.name == w.name) {
                return Err(r.err_at(
                    0,
                    format!("two workloads are named '{}': give each a distinct name", w.name),
                ));
            }
        }
        Ok(())
    }
}
