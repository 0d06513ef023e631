//! Errno names, and the two codes fslab records beside real errnos: above
//! every errno the kernel uses (4095 is the largest `-errno` a syscall can
//! return, but Linux's highest is 133), so they never collide.

/// A replay operation the load file expected to fail succeeded.
pub const UNEXPECTED_SUCCESS: i32 = 1000;
/// A verified read returned other data than was written.
pub const VERIFY_MISMATCH: i32 = 1001;

/// The symbolic name of an errno ("EIO"), or its number.
pub fn errno_name(e: i32) -> String {
    let name = match e {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EIO => "EIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EEXIST => "EEXIST",
        libc::EINVAL => "EINVAL",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::EDQUOT => "EDQUOT",
        libc::ENOTSUP => "ENOTSUP",
        libc::EINTR => "EINTR",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::ENODATA => "ENODATA",
        libc::ENOSYS => "ENOSYS",
        UNEXPECTED_SUCCESS => "UNEXPECTED_SUCCESS",
        VERIFY_MISMATCH => "VERIFY_MISMATCH",
        _ => return format!("errno{e}"),
    };
    name.to_string()
}
