"""tfd's errors as Python exceptions, with TensorFlow 1.x's class names.

Every error a tfd call raises is an OpError subclass chosen by its code, so a
program catches what it can handle (UnavailableError for a task that went
away, DeadlineExceededError for a step past its deadline) and decides on the
class or on `code`, never on the message. `node`, `op` and `task` name what
failed where the runtime knows it ("" otherwise).
"""
from . import _tfd


# TF1's numeric codes (tf.errors.OK ... UNAUTHENTICATED), as
# error_codes.proto numbers them; OpError.error_code is one of them.
OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND = 0, 1, 2, 3, 4, 5
ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION = 6, 7, 8, 9
ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS = 10, 11, 12, 13, 14, 15
UNAUTHENTICATED = 16
_NUMBERS = {name: number for name, number in globals().items()
            if name.isupper() and isinstance(number, int)}
_NAMES = {number: name for name, number in _NUMBERS.items()}


class OpError(Exception):
    """A failed tfd call: code ("INVALID_ARGUMENT"), message, node, op, task,
    reason ("CONNECTION_LOST" or ""); error_code is TF1's number for code.

    Made as tfd makes them, OpError(message, code=None, ...) with keywords,
    or as TF1 code does: SomeError(node_def, op, message) and
    OpError(node_def, op, message, error_code), where node_def and op may
    be None or have a name."""

    code_name = "UNKNOWN"

    def __init__(self, *args, message="", code=None, node="", op="", task="", reason=""):
        if len(args) in (1, 2):  # tfd's (message[, code])
            message, code = args[0], args[1] if len(args) == 2 else code
        elif len(args) in (3, 4):  # TF1's (node_def, op, message[, error_code])
            node, op = node or _name_of(args[0]), op or _name_of(args[1])
            message = args[2]
            if len(args) == 4:
                code = _NAMES.get(args[3], args[3])
        elif args:
            raise TypeError("%s takes (message) or TF1's (node_def, op, message[, error_code]), "
                            "not %d arguments" % (type(self).__name__, len(args)))
        super().__init__(message)
        self.message = message
        self.code = code or self.code_name
        self.node = node
        self.op = op
        self.task = task
        self.reason = reason

    @property
    def error_code(self):
        """TF1's number for `code` (tfd.errors.NOT_FOUND, ...)."""
        return _NUMBERS.get(self.code, UNKNOWN)

    def __str__(self):
        return "%s: %s" % (self.code, self.message)


def _name_of(thing):
    if thing is None:
        return ""
    return getattr(thing, "name", thing) if not isinstance(thing, str) else thing


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


def exception_type_from_error_code(error_code):
    """The OpError subclass of TF1's number `error_code` (UnknownError for
    one tfd does not know)."""
    return _BY_CODE.get(_NAMES.get(error_code), UnknownError)


def error_code_from_exception_type(cls):
    """TF1's number for the OpError subclass `cls`."""
    return _NUMBERS.get(getattr(cls, "code_name", None), UNKNOWN)
