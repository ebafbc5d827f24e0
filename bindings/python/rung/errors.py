"""rung's errors: one exception type per exit code of the ``rung`` command.

Every failure, from the C ABI or from a release tool run as a child process,
is a :class:`rung.Error`. Its subclass says which class of failure it is,
exactly as the command line's exit code does:

* :class:`InputError` (exit code 2): the caller passed something unusable, or
  named a file, directory or model that is not there;
* :class:`NoRuntimeError` (exit code 3): no usable ONNX Runtime build;
* :class:`Failed` (exit code 1): anything else (a library that failed to
  load, ONNX Runtime's own error, a gate that failed, ...).
"""

import enum

__all__ = ["ErrorCode", "Error", "InputError", "NoRuntimeError", "Failed", "error_class_for_exit_code"]


class ErrorCode(enum.IntEnum):
    """The C ABI's ``rung_error_code``: ``code.name`` is ``"invalid_argument"``, ``int(code)`` is 1."""

    ok = 0
    invalid_argument = 1
    not_found = 2
    permission = 3
    load_failed = 4
    unsupported = 5
    runtime = 6
    io = 7
    no_runtime = 8


class Error(Exception):
    """A failure in rung. ``str(error)`` is the failure's message, exactly as rung wrote it.

    Attributes:
        message: the message (the C status's, or the command's error line).
        code: an :class:`ErrorCode` (an int whose ``.name`` is e.g.
            ``"invalid_argument"``) for a failure the C ABI reported, else None
            (a command run as a child process reports only its exit code).
        exit_code: the exit code ``rung`` gives for this failure: 2 bad input,
            3 no runtime, 1 otherwise.
    """

    def __init__(self, message, code=None, exit_code=1):
        super().__init__(message)
        self.message = message
        self.code = code
        self.exit_code = exit_code

    def __str__(self):
        return self.message


class InputError(Error):
    """Bad input: an unusable argument, or a file, directory or name that is not there (exit code 2)."""


class NoRuntimeError(Error):
    """No usable ONNX Runtime build was found (exit code 3)."""


class Failed(Error):
    """Any other failure: loading, ONNX Runtime, I/O, a failed gate (exit code 1)."""


def error_class_for_exit_code(exit_code):
    """The :class:`Error` subclass for an exit code of ``rung``: 2 InputError, 3 NoRuntimeError, else Failed."""
    if exit_code == 2:
        return InputError
    if exit_code == 3:
        return NoRuntimeError
    return Failed
