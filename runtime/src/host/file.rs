//! Reading an input file for a host (a table, a stored run, an answer):
//! one rule in every host. The path must name a regular file, checked
//! before it is opened, so a FIFO, a device or a directory is refused at
//! once instead of blocking the host or reading without end; the file is
//! opened non-blocking where the platform allows it (so a FIFO swapped in
//! after the check cannot block either) and checked again once open, then
//! read under [`MAX_FILE_BYTES`].

use std::io::Read;
use std::path::Path;

use crate::host::codes::Status;

/// The largest file a host reads: 256 MiB, as the CLI caps its inputs (a
/// table of a million tools is about 60 MB).
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    /// It could not be opened or read (missing, no permission, ...).
    Io { path: String, message: String },
    /// It is not a regular file: what it is instead.
    NotRegular { path: String, kind: &'static str },
    /// It is larger than the limit.
    TooLarge { path: String, limit: u64 },
}

impl FileError {
    /// The host status ([`Status::FileIo`], `FileNotRegular`, `FileTooLarge`).
    pub fn status(&self) -> Status {
        match self {
            FileError::Io { .. } => Status::FileIo,
            FileError::NotRegular { .. } => Status::FileNotRegular,
            FileError::TooLarge { .. } => Status::FileTooLarge,
        }
    }

    /// The camelCase code (`io`, `notAFile`, `tooLarge`).
    pub fn code(&self) -> &'static str {
        self.status().load_code().unwrap_or("io")
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Io { path, message } => write!(f, "{path}: {message}"),
            FileError::NotRegular { path, kind } => {
                write!(f, "{path}: not a regular file ({kind})")
            }
            FileError::TooLarge { path, limit } => {
                write!(f, "{path}: larger than {limit} bytes")
            }
        }
    }
}

impl std::error::Error for FileError {}

fn kind_of(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Read the regular file at `path`, at most `limit` bytes.
pub fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let shown = || crate::names::escape(&path.to_string_lossy()).into_owned();
    let io = |e: std::io::Error| FileError::Io {
        path: shown(),
        message: e.to_string(),
    };
    let regular = |t: std::fs::FileType| {
        if t.is_file() {
            Ok(())
        } else {
            Err(FileError::NotRegular {
                path: shown(),
                kind: kind_of(t),
            })
        }
    };
    // Follows symbolic links, as opening does: a link to a table is fine.
    regular(std::fs::metadata(path).map_err(io)?.file_type())?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking open: a FIFO swapped in after the check opens
        // without waiting for a writer, and is refused below. A regular
        // file reads as usual.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(io)?;
    regular(file.metadata().map_err(io)?.file_type())?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge {
            path: shown(),
            limit,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("toolgate-host-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir.join(name)
    }

    #[test]
    fn a_regular_file_is_read_under_the_cap() {
        let p = scratch("t.bin");
        std::fs::write(&p, b"12345").expect("written");
        assert_eq!(read_file(&p, 5).expect("read"), b"12345");
        let e = read_file(&p, 4).expect_err("over the cap");
        assert_eq!(e.status(), Status::FileTooLarge);
        assert_eq!(e.code(), "tooLarge");
        assert!(e.to_string().ends_with("t.bin: larger than 4 bytes"), "{e}");
    }

    #[test]
    fn a_directory_a_fifo_and_a_device_are_refused_without_blocking() {
        let dir = std::env::temp_dir();
        let e = read_file(&dir, MAX_FILE_BYTES).expect_err("a directory");
        assert_eq!(e.status(), Status::FileNotRegular);
        assert!(
            e.to_string().ends_with("not a regular file (a directory)"),
            "{e}"
        );
        let e = read_file(Path::new("/dev/zero"), MAX_FILE_BYTES).expect_err("a device");
        assert!(
            e.to_string().ends_with("not a regular file (a device)"),
            "{e}"
        );
        let fifo = scratch("fifo");
        let _ = std::fs::remove_file(&fifo);
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("a path");
        // SAFETY: a NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_file(&fifo, MAX_FILE_BYTES).expect_err("a FIFO");
        assert_eq!(e.code(), "notAFile");
        assert!(
            e.to_string().ends_with("not a regular file (a FIFO)"),
            "{e}"
        );
        let e = read_file(&scratch("missing"), MAX_FILE_BYTES).expect_err("missing");
        assert_eq!(e.code(), "io");
    }
}
