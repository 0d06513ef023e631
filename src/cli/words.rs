//! Flags that take one of a fixed set of words (`--rw`, `--engine`,
//! `--on-error`, ...), as clap value enums: `--help` lists the words (with
//! what each does) and a typo is refused with clap's "a similar value exists"
//! tip, exit code 2, before any plan is built.
//!
//! The argument structs still hold the word itself (the canonical spelling,
//! whatever alias was typed), not the enum: `plan` turns it into its own
//! type, and the fio job mapping and plan files fill the same structs with
//! words of their own, so the plan stays the one place that validates them
//! (and names the file:line). Each enum's words are the ones its plan parser
//! accepts; tests/cli_conventions.rs checks that every listed word builds a
//! plan.

use clap::builder::{EnumValueParser, PossibleValue, TypedValueParser};
use clap::ValueEnum;
use std::ffi::OsStr;
use std::marker::PhantomData;

/// The value parser of a word flag: clap parses the value as `E` and the
/// flag keeps `E`'s canonical word. With `list`, the value is a comma list of
/// such words (`--order seq,random`), each checked alone (so the tip names
/// the word that is wrong) and kept as the canonical words joined by commas.
#[derive(Clone)]
pub struct Word<E> {
    list: bool,
    _enum: PhantomData<fn() -> E>,
}

impl<E> Word<E> {
    /// One word.
    pub fn one() -> Self {
        Word {
            list: false,
            _enum: PhantomData,
        }
    }

    /// A comma list of words.
    pub fn list() -> Self {
        Word {
            list: true,
            _enum: PhantomData,
        }
    }
}

/// The word clap shows for `e` (its name, not an alias).
fn canonical<E: ValueEnum>(e: &E) -> String {
    e.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

impl<E: ValueEnum + Clone + Send + Sync + 'static> TypedValueParser for Word<E> {
    type Value = String;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<String, clap::Error> {
        let one = EnumValueParser::<E>::new();
        match value.to_str() {
            Some(list) if self.list => list
                .split(',')
                .map(|w| one.parse_ref(cmd, arg, OsStr::new(w.trim())).map(|e| canonical(&e)))
                .collect::<Result<Vec<_>, _>>()
                .map(|words| words.join(",")),
            // not UTF-8: clap's own refusal
            _ => one.parse_ref(cmd, arg, value).map(|e| canonical(&e)),
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            E::value_variants().iter().filter_map(ValueEnum::to_possible_value),
        ))
    }
}

/// `--on-error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnError {
    /// count the failed operation and go on
    Continue,
    /// end the run at the first failed operation
    Stop,
}

/// `fslab io --rw`, with fio's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Rw {
    /// sequential reads
    Read,
    /// sequential writes
    Write,
    /// random reads
    #[value(name = "randread")]
    RandRead,
    /// random writes
    #[value(name = "randwrite")]
    RandWrite,
    /// sequential reads and writes, mixed by --rwmixread
    #[value(alias = "readwrite")]
    Rw,
    /// random reads and writes, mixed by --rwmixread
    #[value(name = "randrw")]
    RandRw,
    /// sequential discards of a block device's ranges (BLKDISCARD)
    Trim,
    /// random discards of a block device's ranges
    #[value(name = "randtrim")]
    RandTrim,
    /// sequential discards, each followed by a write of its range
    #[value(name = "trimwrite")]
    TrimWrite,
    /// random discards, each followed by a write of its range
    #[value(name = "randtrimwrite")]
    RandTrimWrite,
}

/// `fslab io --engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IoEngine {
    /// pread/pwrite, one operation at a time per job
    #[value(alias = "psync")]
    Sync,
    /// io_uring, --iodepth operations in flight per job
    #[value(alias = "io_uring")]
    Uring,
    /// Linux native AIO (io_submit/io_getevents), --iodepth operations in flight per job
    Libaio,
    /// POSIX AIO (glibc's aio_read/aio_write on its thread pool), --iodepth in flight per job
    Posixaio,
    /// memcpy to and from a shared mapping of each file (the page faults are the I/O)
    Mmap,
    /// no I/O at all: measures fslab itself
    Null,
}

/// `fslab meta --engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetaEngine {
    /// the system calls themselves
    Sync,
    /// one operation at a time through io_uring
    #[value(alias = "io_uring")]
    Uring,
}

/// `fslab io --verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Verify {
    /// a header and a CRC32C in every block
    Crc32c,
}

/// `fslab meta --order` (a comma list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Order {
    /// files in numeric order, stat by readdir
    #[value(alias = "sequential")]
    Seq,
    /// random-looking names, stat and delete in a random order
    #[value(alias = "rand")]
    Random,
}

/// `fslab meta --phases` (a comma list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetaPhase {
    /// read every --xattr of every file
    Getxattr,
    /// rename every file in its directory
    Rename,
    /// list every directory
    Readdir,
    /// open and close every file
    OpenClose,
}

/// `fslab probe --op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProbeOp {
    /// open(O_CREAT|O_EXCL|O_TRUNC) + close + unlink of a new file
    Create,
    /// stat of a file
    Stat,
    /// mkdir + rmdir
    Mkdir,
    /// append 4 KiB to a file + fdatasync
    AppendFsync,
    /// a random 4 KiB O_DIRECT read of a --read-file-size file
    Read,
}

/// `fslab replay --timestamps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Timestamps {
    /// wait until each line's time, as dbench does
    #[value(alias = "honor")]
    Honour,
    /// run the lines back to back, as fast as possible
    Ignore,
}

/// `fslab run --scratch` (a comma list: clap splits it, each word checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScratchFs {
    Ext2,
    Ext3,
    Ext4,
    Xfs,
    Btrfs,
    /// in memory, no image or loop device
    Tmpfs,
}

/// `fslab fio --output-format` (a comma list), as fio's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FioFormat {
    /// fio's human-readable report
    Normal,
    /// fio's JSON
    Json,
    /// fio's JSON with the latency histogram buckets
    #[value(name = "json+")]
    JsonPlus,
    /// fio's semicolon-separated terse format, version 3
    #[value(alias = "minimal")]
    Terse,
}
