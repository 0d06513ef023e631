//! Why a thread slept, from the kernel stack it slept in.
//!
//! A sleep's stack is its callers at the moment it left the CPU: the
//! functions on it are still running, so a lock function there means the
//! thread waits for that lock, a jbd2 function that it waits for the
//! journal. The most specific reason wins: writeback throttling, then the
//! journal or log, then a lock, then I/O (a throttled writer sleeps in
//! `io_schedule_timeout` under `balance_dirty_pages`; a journal wait may
//! sit on a buffer's I/O).

use crate::stats::anatomy::Layer;

/// Scheduler frames: left out of a site and of the stack shown.
fn is_scheduler(f: &str) -> bool {
    matches!(
        f,
        "__schedule"
            | "schedule"
            | "schedule_idle"
            | "schedule_timeout"
            | "schedule_preempt_disabled"
            | "io_schedule"
            | "io_schedule_timeout"
            | "schedule_hrtimeout_range"
            | "schedule_hrtimeout_range_clock"
            | "preempt_schedule_common"
            | "bit_wait_io"
            | "bit_wait"
            | "__wait_on_bit"
            | "out_of_line_wait_on_bit"
            | "out_of_line_wait_on_bit_lock"
            | "__wait_on_bit_lock"
            | "do_wait_for_common"
            | "__wait_for_common"
            | "wait_for_common"
            | "wait_for_common_io"
            | "finish_task_switch"
            | "__traceiter_sched_switch"
    ) || f.starts_with("__traceiter_")
        || f.starts_with("bpf_")
        || f.starts_with("__bpf_trace")
}

fn class_of_frame(f: &str) -> Option<Layer> {
    // the page cache's dirty limits, and the block layer's writeback
    // throttling (wbt) that holds a writer's requests behind writeback
    if f.starts_with("balance_dirty_pages") || f.starts_with("wbt_wait") || f.starts_with("rq_qos_wait") {
        return Some(Layer::Throttle);
    }
    if f.starts_with("jbd2") || f.starts_with("xlog_") || f.starts_with("xfs_log_") || f.contains("log_force") {
        return Some(Layer::Journal);
    }
    if f.contains("mutex_lock")
        || f.starts_with("rwsem_down")
        || f.starts_with("down_read")
        || f.starts_with("down_write")
        || f == "__down"
        || f.starts_with("__down_")
        || f.starts_with("rt_mutex")
        || f.starts_with("percpu_down")
        || f.starts_with("__percpu_down")
    {
        return Some(Layer::Lock);
    }
    if f.starts_with("io_schedule")
        || f.starts_with("folio_wait")
        || f.starts_with("wait_on_page")
        || f.starts_with("__wait_on_buffer")
        || f.starts_with("__folio_lock")
        || f.starts_with("blk_mq_get_tag")
        || f.starts_with("submit_bio_wait")
        || f.starts_with("blk_execute_rq")
        || f.starts_with("iomap_dio")
        || f.starts_with("__blkdev_direct_IO")
        || f.starts_with("blkdev_direct_IO")
        || f.starts_with("__iomap_dio_rw")
        || f.starts_with("wait_for_completion_io")
        || f.starts_with("filemap_fdatawait")
        || f.starts_with("__filemap_fdatawait")
    {
        return Some(Layer::Io);
    }
    None
}

/// A named stack.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub class: Layer,
    /// The first function under the scheduler.
    pub site: String,
    /// Innermost first, without the scheduler's frames.
    pub frames: Vec<String>,
}

/// Classifies a stack given as function names, innermost first.
pub fn classify(frames: &[String]) -> Resolved {
    let shown: Vec<String> = frames.iter().filter(|f| !is_scheduler(f)).cloned().collect();
    let rank = |l: Layer| match l {
        Layer::Throttle => 0,
        Layer::Journal => 1,
        Layer::Lock => 2,
        Layer::Io => 3,
        _ => 4,
    };
    let class = frames
        .iter()
        .filter_map(|f| class_of_frame(f))
        .min_by_key(|&l| rank(l))
        .unwrap_or(Layer::Other);
    Resolved {
        class,
        site: shown.first().cloned().unwrap_or_default(),
        frames: shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_most_specific_reason_wins() {
        let fsync = v(&[
            "__schedule",
            "schedule",
            "jbd2_log_wait_commit",
            "jbd2_complete_transaction",
            "ext4_fc_commit",
            "ext4_sync_file",
            "do_fsync",
        ]);
        let r = classify(&fsync);
        assert_eq!(r.class, Layer::Journal);
        assert_eq!(r.site, "jbd2_log_wait_commit");
        let throttled = v(&[
            "__schedule",
            "schedule",
            "io_schedule_timeout",
            "balance_dirty_pages",
            "ext4_buffered_write_iter",
        ]);
        assert_eq!(classify(&throttled).class, Layer::Throttle);
        assert_eq!(classify(&throttled).site, "balance_dirty_pages");
        let wbt = v(&[
            "__schedule",
            "io_schedule",
            "rq_qos_wait",
            "wbt_wait",
            "__rq_qos_throttle",
            "blk_mq_submit_bio",
        ]);
        assert_eq!(classify(&wbt).class, Layer::Throttle);
        let lock = v(&[
            "__schedule",
            "schedule",
            "rwsem_down_write_slowpath",
            "down_write",
            "filename_create",
        ]);
        assert_eq!(classify(&lock).class, Layer::Lock);
        let io = v(&["__schedule", "io_schedule", "folio_wait_bit_common", "filemap_read"]);
        assert_eq!(classify(&io).class, Layer::Io);
        assert_eq!(
            classify(&v(&["__schedule", "schedule", "do_nanosleep"])).class,
            Layer::Other
        );
    }
}
