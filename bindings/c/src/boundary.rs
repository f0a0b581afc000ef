//! The rules of the boundary, in one place: argument checks, the thread's
//! last error, panics caught at every entry, buffers and handles handed
//! out. Every `extern "C"` function of the crate is written with these
//! helpers and nothing else touches a raw pointer.

use std::cell::RefCell;
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use toolgate_runtime::host::FileError;
use toolgate_runtime::LoadError;

use crate::codes::{
    TOOLGATE_ERR_ARGUMENT, TOOLGATE_ERR_NULL, TOOLGATE_ERR_PANIC, TOOLGATE_ERR_UTF8, TOOLGATE_OK,
};

/// A string (or bytes) returned to the host: `len` bytes of UTF-8 at `ptr`,
/// then a NUL not counted in `len`. Free with `toolgate_buf_free`.
#[repr(C)]
pub struct toolgate_buf {
    pub ptr: *mut u8,
    pub len: usize,
}

/// A failed call: its status and message.
pub(crate) struct Error {
    pub(crate) code: i32,
    pub(crate) message: String,
}

pub(crate) fn err(code: i32, message: impl Into<String>) -> Error {
    Error {
        code,
        message: message.into(),
    }
}

impl From<LoadError> for Error {
    fn from(e: LoadError) -> Error {
        err(e.status().number(), e.to_string())
    }
}

impl From<FileError> for Error {
    fn from(e: FileError) -> Error {
        err(e.status().number(), e.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<Option<(i32, String)>> = const { RefCell::new(None) };
}

fn set_last_error(code: i32, message: String) {
    LAST_ERROR.with(|e| *e.borrow_mut() = Some((code, message)));
}

/// The last error of this thread, if any.
pub(crate) fn last_error() -> Option<(i32, String)> {
    LAST_ERROR.with(|e| e.borrow().clone())
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Run an entry point: its error or panic becomes a status code and the
/// thread's last error.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), Error>) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => TOOLGATE_OK,
        Ok(Err(e)) => {
            set_last_error(e.code, e.message);
            e.code
        }
        Err(p) => {
            set_last_error(
                TOOLGATE_ERR_PANIC,
                format!("internal error (panic): {}", panic_text(p.as_ref())),
            );
            TOOLGATE_ERR_PANIC
        }
    }
}

// --------------------------------------------------------------- arguments

/// `len` values of `T` at `ptr`; NULL only with length 0 (the empty slice).
/// A length whose byte size exceeds `isize::MAX` (what a slice may span) is
/// an argument error, never undefined behaviour.
pub(crate) unsafe fn slice_arg<'a, T>(
    ptr: *const T,
    len: usize,
    what: &str,
) -> Result<&'a [T], Error> {
    check_len::<T>(len, what)?;
    if ptr.is_null() {
        return match len {
            0 => Ok(&[]),
            _ => Err(err(
                TOOLGATE_ERR_NULL,
                format!("{what}: NULL pointer with length {len}"),
            )),
        };
    }
    // SAFETY: the caller passes `len` readable values at `ptr` (the header's
    // contract); `len * size_of::<T>()` is at most `isize::MAX` (checked).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `len` writable values of `T` at `ptr`; NULL only with length 0.
pub(crate) unsafe fn slice_out<'a, T>(
    ptr: *mut T,
    len: usize,
    what: &str,
) -> Result<&'a mut [T], Error> {
    check_len::<T>(len, what)?;
    if ptr.is_null() {
        return match len {
            0 => Ok(&mut []),
            _ => Err(err(
                TOOLGATE_ERR_NULL,
                format!("{what}: NULL pointer with length {len}"),
            )),
        };
    }
    // SAFETY: as in `slice_arg`, for writable values.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

fn check_len<T>(len: usize, what: &str) -> Result<(), Error> {
    let fits = len
        .checked_mul(std::mem::size_of::<T>().max(1))
        .is_some_and(|bytes| bytes <= isize::MAX as usize);
    if fits {
        Ok(())
    } else {
        Err(err(
            TOOLGATE_ERR_ARGUMENT,
            format!("{what}: length {len} is larger than any buffer can be"),
        ))
    }
}

/// Bytes at (`ptr`, `len`); NULL only with length 0.
pub(crate) unsafe fn bytes_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<&'a [u8], Error> {
    unsafe { slice_arg(ptr.cast::<u8>(), len, what) }
}

/// A required UTF-8 string.
pub(crate) unsafe fn str_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<&'a str, Error> {
    let b = unsafe { bytes_arg(ptr, len, what)? };
    utf8(b, what)
}

pub(crate) fn utf8<'a>(b: &'a [u8], what: &str) -> Result<&'a str, Error> {
    std::str::from_utf8(b).map_err(|e| err(TOOLGATE_ERR_UTF8, format!("{what}: not UTF-8: {e}")))
}

/// An optional UTF-8 string: NULL with length 0 is absent. NULL with any
/// other length is an argument error, never "absent": an absent consumer
/// would drop its access profile, so a malformed argument must not read as
/// the wider answer.
pub(crate) unsafe fn opt_str_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a str>, Error> {
    if ptr.is_null() {
        return match len {
            0 => Ok(None),
            _ => Err(err(
                TOOLGATE_ERR_NULL,
                format!("{what}: NULL pointer with length {len} (absent is NULL with length 0)"),
            )),
        };
    }
    unsafe { str_arg(ptr, len, what).map(Some) }
}

/// A handle the host passes in.
pub(crate) unsafe fn handle_ref<'a, T>(p: *const T, what: &str) -> Result<&'a T, Error> {
    // SAFETY: a non-NULL pointer is one this library returned and the host has not freed.
    unsafe { p.as_ref() }.ok_or_else(|| err(TOOLGATE_ERR_NULL, format!("{what} is NULL")))
}

/// A location the host passes for a result.
pub(crate) unsafe fn out_ref<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Error> {
    // SAFETY: the caller passes a writable location for the result.
    unsafe { p.as_mut() }.ok_or_else(|| err(TOOLGATE_ERR_NULL, format!("{what} is NULL")))
}

// ------------------------------------------------------------------ output

pub(crate) fn buf_of(s: String) -> toolgate_buf {
    let mut v = s.into_bytes();
    let len = v.len();
    v.push(0);
    let ptr = Box::into_raw(v.into_boxed_slice()).cast::<u8>();
    toolgate_buf { ptr, len }
}

pub(crate) const EMPTY_BUF: toolgate_buf = toolgate_buf {
    ptr: std::ptr::null_mut(),
    len: 0,
};

/// Write a string result to `out` (cleared first, so an error leaves it empty).
pub(crate) fn with_buf(out: *mut toolgate_buf, f: impl FnOnce() -> Result<String, Error>) -> i32 {
    // SAFETY: `out` is checked for NULL; the caller passes a writable buffer slot.
    if let Some(o) = unsafe { out.as_mut() } {
        *o = EMPTY_BUF;
    }
    guard(|| {
        let o = unsafe { out_ref(out, "out")? };
        *o = buf_of(f()?);
        Ok(())
    })
}

pub(crate) fn json(v: &impl serde::Serialize) -> Result<String, Error> {
    serde_json::to_string(v).map_err(|e| err(TOOLGATE_ERR_PANIC, format!("serialising: {e}")))
}

/// Write a handle result to `out` (NULL first, so an error leaves it NULL).
pub(crate) fn with_handle<T>(out: *mut *mut T, f: impl FnOnce() -> Result<T, Error>) -> i32 {
    // SAFETY: as in `with_buf`.
    if let Some(o) = unsafe { out.as_mut() } {
        *o = std::ptr::null_mut();
    }
    guard(|| {
        let o = unsafe { out_ref(out, "out")? };
        *o = Box::into_raw(Box::new(f()?));
        Ok(())
    })
}

pub(crate) unsafe fn free_handle<T>(p: *mut T) {
    if !p.is_null() {
        // A panic in a destructor must not cross the boundary either.
        let _ = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: `p` came from `Box::into_raw` in this library and is freed once.
            drop(unsafe { Box::from_raw(p) })
        }));
    }
}

/// Free a buffer returned by this library. `{NULL, 0}` is a no-op.
#[no_mangle]
pub unsafe extern "C" fn toolgate_buf_free(buf: toolgate_buf) {
    if !buf.ptr.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: `ptr` came from `buf_of`: a boxed slice of `len + 1` bytes.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(buf.ptr, buf.len + 1)) })
        }));
    }
}

/// The message of the last call on this thread that failed (empty if none),
/// and its status as the return value (`TOOLGATE_OK` if none).
#[no_mangle]
pub unsafe extern "C" fn toolgate_last_error(out: *mut toolgate_buf) -> i32 {
    let mut code = TOOLGATE_OK;
    let status = with_buf(out, || {
        let (c, m) = last_error().unwrap_or((TOOLGATE_OK, String::new()));
        code = c;
        Ok(m)
    });
    if status == TOOLGATE_OK {
        code
    } else {
        status
    }
}
