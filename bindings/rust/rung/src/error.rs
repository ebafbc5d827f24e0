use std::fmt;

use rung_sys as sys;

/// What kind of failure: `rung_error_code`, each mapping to the exit code
/// rung's command line gives for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The caller passed something unusable (exit 2).
    InvalidArgument,
    /// A file, directory or name that is not there (exit 2).
    NotFound,
    /// Refused for safety, e.g. a library others can write to (exit 1).
    Permission,
    /// A library failed to load (exit 1).
    LoadFailed,
    /// The runtime or platform cannot do it (exit 1).
    Unsupported,
    /// ONNX Runtime returned an error (exit 1).
    Runtime,
    /// Reading or writing a file failed (exit 1).
    Io,
    /// No usable ONNX Runtime build (exit 3).
    NoRuntime,
    /// A code this crate does not know, from a newer library (exit 1).
    Other(i32),
}

impl ErrorCode {
    /// The code from its C value.
    pub fn from_raw(raw: sys::rung_error_code) -> ErrorCode {
        match raw {
            sys::RUNG_INVALID_ARGUMENT => ErrorCode::InvalidArgument,
            sys::RUNG_NOT_FOUND => ErrorCode::NotFound,
            sys::RUNG_PERMISSION => ErrorCode::Permission,
            sys::RUNG_LOAD_FAILED => ErrorCode::LoadFailed,
            sys::RUNG_UNSUPPORTED => ErrorCode::Unsupported,
            sys::RUNG_RUNTIME => ErrorCode::Runtime,
            sys::RUNG_IO => ErrorCode::Io,
            sys::RUNG_NO_RUNTIME => ErrorCode::NoRuntime,
            other => ErrorCode::Other(other),
        }
    }

    /// The code's C value.
    pub fn raw(self) -> sys::rung_error_code {
        match self {
            ErrorCode::InvalidArgument => sys::RUNG_INVALID_ARGUMENT,
            ErrorCode::NotFound => sys::RUNG_NOT_FOUND,
            ErrorCode::Permission => sys::RUNG_PERMISSION,
            ErrorCode::LoadFailed => sys::RUNG_LOAD_FAILED,
            ErrorCode::Unsupported => sys::RUNG_UNSUPPORTED,
            ErrorCode::Runtime => sys::RUNG_RUNTIME,
            ErrorCode::Io => sys::RUNG_IO,
            ErrorCode::NoRuntime => sys::RUNG_NO_RUNTIME,
            ErrorCode::Other(raw) => raw,
        }
    }

    /// The exit code `rung` gives for this failure: 2 bad input, 3 no runtime, 1 otherwise.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorCode::InvalidArgument | ErrorCode::NotFound => 2,
            ErrorCode::NoRuntime => 3,
            _ => 1,
        }
    }
}

/// A failed call: the status's code and message (which names what failed:
/// the file, the option key, the model and input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What kind of failure.
    pub code: ErrorCode,
    /// The library's message, or this crate's for a check made before the call.
    pub message: String,
}

impl Error {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error { code, message: message.into() }
    }

    /// The caller passed something unusable; checked on the Rust side.
    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    /// The exit code `rung` gives for this failure: 2 bad input, 3 no runtime, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        self.code.exit_code()
    }

    /// Turns a status into Ok (NULL) or Err, freeing it.
    ///
    /// # Safety
    /// `status` is NULL or a status a rung_ call returned and nobody freed.
    pub(crate) unsafe fn check(status: *mut sys::rung_status) -> Result<(), Error> {
        if status.is_null() {
            return Ok(());
        }
        let code = ErrorCode::from_raw(sys::rung_status_code(status));
        let message = crate::borrowed_str(sys::rung_status_message(status)).to_string();
        sys::rung_status_free(status);
        Err(Error { code, message })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "rung error {:?}", self.code)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for Error {}

/// A rung call's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
