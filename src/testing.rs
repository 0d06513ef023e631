//! What unit tests share: the one way a test that needs the machine's
//! privileges or tools is skipped (never silently under CI).

/// Whether a test that needs `what` (root, losetup...) can run: `ready`.
/// When it cannot, the test is skipped with a line on stderr, and fails
/// instead under FSLAB_REQUIRE_ALL=1, as CI runs the tests.
pub fn ready_or_skip(ready: bool, what: &str) -> bool {
    if !ready {
        assert_ne!(
            std::env::var("FSLAB_REQUIRE_ALL").as_deref(),
            Ok("1"),
            "needs {what} (FSLAB_REQUIRE_ALL=1)"
        );
        eprintln!("skipped: needs {what}");
    }
    ready
}

/// `ready_or_skip` for root.
pub fn root_or_skip() -> bool {
    ready_or_skip(rustix::process::geteuid().is_root(), "root")
}
