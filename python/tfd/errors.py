"""tfd's errors as Python exceptions, with TensorFlow 1.x's class names.

Every error a tfd call raises is an OpError subclass chosen by its code, so a
program catches what it can handle (UnavailableError for a task that went
away, DeadlineExceededError for a step past its deadline) and decides on the
class or on `code`, never on the message. `node`, `op` and `task` name what
failed where the runtime knows it ("" otherwise).
"""
from . import _tfd


class OpError(Exception):
    """A failed tfd call: code ("INVALID_ARGUMENT"), message, node, op, task,
    reason ("CONNECTION_LOST" or "")."""

    code_name = "UNKNOWN"

    def __init__(self, message="", code=None, node="", op="", task="", reason=""):
        super().__init__(message)
        self.message = message
        self.code = code or self.code_name
        self.node = node
        self.op = op
        self.task = task
        self.reason = reason

    @property
    def error_code(self):
        """TF's spelling of `code`."""
        return self.code

    def __str__(self):
        return "%s: %s" % (self.code, self.message)


def _error_class(name, code):
    cls = type(name, (OpError,), {"code_name": code, "__doc__": "tfd error %s." % code})
    cls.__module__ = __name__
    return cls


CancelledError = _error_class("CancelledError", "CANCELLED")
UnknownError = _error_class("UnknownError", "UNKNOWN")
InvalidArgumentError = _error_class("InvalidArgumentError", "INVALID_ARGUMENT")
DeadlineExceededError = _error_class("DeadlineExceededError", "DEADLINE_EXCEEDED")
NotFoundError = _error_class("NotFoundError", "NOT_FOUND")
AlreadyExistsError = _error_class("AlreadyExistsError", "ALREADY_EXISTS")
PermissionDeniedError = _error_class("PermissionDeniedError", "PERMISSION_DENIED")
UnauthenticatedError = _error_class("UnauthenticatedError", "UNAUTHENTICATED")
ResourceExhaustedError = _error_class("ResourceExhaustedError", "RESOURCE_EXHAUSTED")
FailedPreconditionError = _error_class("FailedPreconditionError", "FAILED_PRECONDITION")
AbortedError = _error_class("AbortedError", "ABORTED")
OutOfRangeError = _error_class("OutOfRangeError", "OUT_OF_RANGE")
UnavailableError = _error_class("UnavailableError", "UNAVAILABLE")
InternalError = _error_class("InternalError", "INTERNAL")
UnimplementedError = _error_class("UnimplementedError", "UNIMPLEMENTED")
DataLossError = _error_class("DataLossError", "DATA_LOSS")

_BY_CODE = {cls.code_name: cls for cls in (
    CancelledError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, UnauthenticatedError, ResourceExhaustedError,
    FailedPreconditionError, AbortedError, OutOfRangeError, UnavailableError, InternalError,
    UnimplementedError, DataLossError)}

_tfd.set_error_classes(_BY_CODE, UnknownError)
