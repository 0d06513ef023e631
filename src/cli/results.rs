//! `fslab compare` and `fslab report`: the commands that read saved
//! result files instead of measuring, their flags and help examples.

use clap::Args;

use super::common::LayoutArgs;

#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// Result files (--output json) of fslab run, io, meta, replay or probe.
    #[arg(required = true, value_name = "RESULTS.json")]
    pub files: Vec<String>,
    /// The filesystem (or, for single-command results, the file name without .json) others are compared with.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Compare cells that ran different workloads (another bs, rw, kind...);
    /// without it they are refused, naming the keys. The table then says what differs.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Result files (--output json) of fslab run, io, meta, replay or probe.
    #[arg(required = true, value_name = "RESULTS.json")]
    pub files: Vec<String>,
    /// Where to write the page.
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: String,
}

pub(super) const REPORT_EXAMPLES: &str = "\
Examples:
  fslab run examples/seed-metadata-xattr.toml --output json:meta.json
  fslab report meta.json -o meta.html
  # single-command results side by side
  fslab report ext4.json xfs.json -o io.html
  # the same page, rewritten after every cell
  fslab run plan.toml --output html:plan.html";

pub(super) const COMPARE_EXAMPLES: &str = "Examples:
  fslab run examples/seed-metadata-xattr.toml --output json:meta.json
  fslab compare meta.json
  fslab io --target /mnt/ext4 --rw randrw --direct --output json:ext4.json
  fslab io --target /mnt/xfs --rw randrw --direct --output json:xfs.json
  fslab compare ext4.json xfs.json --baseline ext4
  fslab compare a.json b.json --format plain   # ASCII, for mail
  fslab compare 4k.json 64k.json --force  # differing workloads (bs)
  fslab compare meta.json --format markdown    # pipe tables: an issue, a wiki";
