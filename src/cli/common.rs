//! The flags every measuring command shares (target, output, telemetry),
//! the help headings they are grouped under, and the table format `run` and
//! `compare` both take: what more than one command's argument struct uses,
//! so each command's file needs only this one.

use clap::Args;

use super::words::{self, Word};

/// Help headings of the measuring commands' flags.
pub(super) const WORKLOAD: &str = "Workload";
pub(super) const ENGINE: &str = "Engine";
pub(super) const TARGET: &str = "Target";
pub(super) const OUTPUT: &str = "Output";
pub(super) const SAFETY: &str = "Safety";
pub(super) const TELEMETRY: &str = "Telemetry";

/// Flags every measuring command shares.
#[derive(Debug, Args, Clone, Default)]
pub struct CommonArgs {
    /// Where the work runs: a directory (fslab works in a fresh subdirectory it
    /// removes afterwards), a regular file, or a block device (--allow-device).
    #[arg(long, value_name = "PATH", default_value = ".", help_heading = TARGET)]
    pub target: String,
    /// Output as FORMAT or FORMAT:PATH (repeatable): text, json, csv, html, fio-json (io, run),
    /// bonnie-csv (meta), timeline-csv (probe). The text report stays on stdout
    /// beside file outputs unless another format goes there (FORMAT or FORMAT:-).
    #[arg(long, value_name = "FORMAT[:PATH]", help_heading = OUTPUT)]
    pub output: Vec<String>,
    /// No progress bar and no text report unless asked for with --output text.
    #[arg(long, short, help_heading = OUTPUT)]
    pub quiet: bool,
    /// Keep each cell's flags and warnings (and each table's summary of
    /// them) in the JSON: the text says only the cell's bound and how many
    /// there are. A plan's `quiet-warnings = true` does the same.
    #[arg(long, help_heading = OUTPUT)]
    pub quiet_warnings: bool,
    /// What a failed operation does. Either way the results so far are
    /// written and the exit code is 1.
    #[arg(long, value_name = "WHAT", default_value = "continue", value_parser = Word::<words::OnError>::one(), help_heading = WORKLOAD)]
    pub on_error: String,
    /// Seed of the random offsets and data (default: fixed, so runs repeat).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub seed: Option<String>,
    #[command(flatten)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// How the text report is laid out: its tables' format and the width it
/// fits (every command with a text report, and `compare`).
#[derive(Debug, Args, Clone, Default)]
pub struct LayoutArgs {
    /// How the text report (stdout, --output text) draws its tables: text
    /// (boxed), plain (ASCII, for mail), markdown or csv.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = TableFormat::Text, help_heading = OUTPUT)]
    pub format: TableFormat,
    /// The widest line of the text report: wider tables are split into
    /// blocks of columns, longer lines wrapped between words [default: the
    /// terminal's width on a terminal ($COLUMNS if set), else 80].
    #[arg(long, value_name = "COLS", allow_hyphen_values = true, help_heading = OUTPUT)]
    pub width: Option<String>,
}

/// What is measured beside the numbers (every measuring command).
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = TELEMETRY)]
pub struct TelemetryArgs {
    /// Do not sample the devices, CPU, memory and pressure beside each cell.
    #[arg(long)]
    pub no_telemetry: bool,
    /// Mark a cell disturbed when other processes (or the hypervisor's
    /// steal) took more than PCT % of all CPUs during it [default: 10].
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub disturbed_cpu: Option<String>,
    /// Sample fslab's CPU with kernel stacks in each timed phase
    /// (perf_event_open, cpu-clock): top symbols in the report, a
    /// folded-stacks file per cell, a flame graph in the HTML report.
    #[arg(long)]
    pub profile: bool,
    /// Where --profile writes its folded-stacks files [default: beside the
    /// first result file; the current directory, with a note, when the
    /// results go to stdout only].
    #[arg(long, value_name = "DIR")]
    pub profile_dir: Option<String>,
    /// Profile samples per second and CPU [default: 999].
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    pub profile_hz: Option<String>,
    /// Split each operation's time into layers (on CPU, runqueue, I/O,
    /// journal/log, lock, writeback throttling) per operation kind, with
    /// the block layer's queue and device time: measured in the kernel by
    /// BPF on tracepoints (needs root; without, the cell says so and still
    /// measures).
    #[arg(long)]
    pub anatomy: bool,
    /// Explain each operation slower than DUR: where it slept (kernel
    /// stacks), who woke it, the journal commits, log forces and device
    /// activity meanwhile (needs root) [e.g. 100ms].
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub explain_slow: Option<String>,
}

/// How tables are printed (`fslab compare --format`, `fslab run --format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    /// Boxed tables (Unicode box drawing, µs, ±, ×).
    #[default]
    Text,
    /// ASCII only, no box drawing (wide tables split into column blocks): for mail.
    Plain,
    /// GitHub pipe tables, for issues and wikis.
    Markdown,
    /// Comma-separated values, one row per figure, for scripts.
    Csv,
}
