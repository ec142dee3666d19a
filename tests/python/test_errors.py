"""tfd.errors as TF1 code uses them: classes chosen by code, TF1's numeric
codes, and errors made by user code with TF1's constructor."""
import pickle

import pytest

import tfd


def test_a_failed_call_raises_the_class_of_its_code_with_tf1s_number():
    with pytest.raises(tfd.errors.InvalidArgumentError) as info:
        tfd.Session().run(tfd.decode_csv(tfd.constant(["x"]), [[0]]))
    e = info.value
    assert e.code == "INVALID_ARGUMENT" and e.error_code == tfd.errors.INVALID_ARGUMENT == 3
    assert isinstance(e, tfd.errors.OpError) and "not a valid int32" in e.message


def test_tf1s_codes_and_classes_map_both_ways():
    numbers = {"CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4,
               "NOT_FOUND": 5, "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7,
               "RESOURCE_EXHAUSTED": 8, "FAILED_PRECONDITION": 9, "ABORTED": 10,
               "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12, "INTERNAL": 13, "UNAVAILABLE": 14,
               "DATA_LOSS": 15, "UNAUTHENTICATED": 16}
    for name, number in numbers.items():
        assert getattr(tfd.errors, name) == number
        cls = tfd.errors.exception_type_from_error_code(number)
        assert cls.code_name == name and tfd.errors.error_code_from_exception_type(cls) == number
        assert cls("m").error_code == number
    assert tfd.errors.exception_type_from_error_code(99) is tfd.errors.UnknownError


def test_user_code_makes_errors_with_tf1s_constructor():
    """Hooks and input functions written for TF1 raise errors themselves,
    OutOfRangeError(None, None, "input done") above all."""
    e = tfd.errors.OutOfRangeError(None, None, "input done")
    assert e.message == "input done" and e.code == "OUT_OF_RANGE" and e.node == ""
    with pytest.raises(tfd.errors.OutOfRangeError, match="input done"):
        raise e

    class Named:
        name = "reader/read"

    e = tfd.errors.OpError(Named(), None, "bad", tfd.errors.DATA_LOSS)
    assert (e.node, e.code, e.error_code) == ("reader/read", "DATA_LOSS", 15)
    assert isinstance(tfd.errors.UnavailableError("gone"), tfd.errors.OpError)
    back = pickle.loads(pickle.dumps(tfd.errors.AbortedError("retry")))
    assert type(back) is tfd.errors.AbortedError and back.message == "retry"
    with pytest.raises(TypeError, match="node_def, op, message"):
        tfd.errors.NotFoundError(1, 2, 3, 4, 5)
