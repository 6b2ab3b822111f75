"""Numbers stored into typed arrays in C (memory/_postings.c extend_numbers, typed_array)
leave the arrays exactly as `array.extend` and `array(...)` do, errors and all."""

from __future__ import annotations

import math
from array import array

import numpy as np
import pytest

from societas.memory import rank_kernel

GOOD = [
    ("q", [1, -2, 2**62, np.int64(5), True]),
    ("l", [5, -6]),
    ("d", [1.5, 2, math.inf, np.float64(0.25)]),
    ("f", [0.1, 1, -3.5]),
    ("I", [0, 2**32 - 1, np.uint32(7)]),
    ("H", [0, 65535]),
    ("q", []),
]
BAD = [
    ("I", [1, -1], OverflowError),
    ("I", [2**32], OverflowError),
    ("H", [3, 70_000], OverflowError),
    ("q", [1, 1.5], TypeError),
    ("d", [1.0, "x"], TypeError),
    ("l", [2, None], TypeError),
]


def kernel():
    found = rank_kernel.POSTINGS
    assert found is not None, "the install did not build memory/_postings.c"
    return found


@pytest.mark.parametrize(("typecode", "values"), GOOD)
@pytest.mark.parametrize("container", [list, tuple])
def test_numbers_are_stored_as_array_stores_them(typecode, values, container):
    mine, theirs = array(typecode, [3]), array(typecode, [3])
    kernel().extend_numbers(mine, container(values))
    theirs.extend(values)
    assert mine.tobytes() == theirs.tobytes()
    made = kernel().typed_array(typecode, container(values))
    assert made.typecode == typecode and made.tobytes() == array(typecode, values).tobytes()


@pytest.mark.parametrize(("typecode", "values", "error"), BAD)
def test_a_bad_number_fails_as_in_array_keeping_those_before(typecode, values, error):
    mine, theirs = array(typecode, [3]), array(typecode, [3])
    with pytest.raises(error):
        kernel().extend_numbers(mine, values)
    with pytest.raises(error):
        theirs.extend(values)
    assert mine.tobytes() == theirs.tobytes() and len(mine) == len(values)  # bad one last
    with pytest.raises(error):
        kernel().typed_array(typecode, values)


def test_other_arrays_and_iterables_take_the_methods():
    """A type code the kernel does not store ('b'), a generator, an exporting array: the
    array's own extend, with its own result or error."""
    small = array("b", [1])
    kernel().extend_numbers(small, [2, 3])
    assert small.tolist() == [1, 2, 3]
    numbers = array("d", [1.0])
    kernel().extend_numbers(numbers, (x / 2 for x in range(3)))
    assert numbers.tolist() == [1.0, 0.0, 0.5, 1.0]
    view = memoryview(numbers)
    with pytest.raises(BufferError):
        kernel().extend_numbers(numbers, [4.0])
    view.release()
    assert numbers.tolist() == [1.0, 0.0, 0.5, 1.0]


class Columns:
    """An object with typed-array columns, as the hot tier holds them."""

    def __init__(self) -> None:
        self.ids, self.times, self.small = array("q", [9]), array("d"), array("H")


NAMES = ("ids", "times", "small")


def test_each_column_is_extended_a_number_standing_for_n_of_itself():
    """Lists, tuples and other sequences are stored as `extend_numbers` stores them; an int
    or a float (numpy's too) stands for n of itself; n = 0 changes nothing."""
    mine = Columns()
    kernel().extend_each(mine, NAMES, 3, ([1, 2, 3], 0.5, range(3)))
    kernel().extend_each(mine, NAMES, 2, ((4, np.int64(5)), np.float64(1.5), 7))
    kernel().extend_each(mine, NAMES, 0, ([], 2.0, 7))
    assert mine.ids.tolist() == [9, 1, 2, 3, 4, 5]
    assert mine.times.tolist() == [0.5, 0.5, 0.5, 1.5, 1.5]
    assert mine.small.tolist() == [0, 1, 2, 7, 7]


def test_each_column_fails_naming_it_and_keeps_those_before():
    """A column of another length fails before it is stored, naming it; a bad number fails
    as `array` fails, the columns before it extended (as the Python loop leaves them)."""
    mine = Columns()
    with pytest.raises(ValueError, match="column 1 has 3 values, not 2"):
        kernel().extend_each(mine, NAMES, 2, ([1, 2], [0.5] * 3, 1))
    assert mine.ids.tolist() == [9, 1, 2] and not mine.times and not mine.small
    with pytest.raises(OverflowError):
        kernel().extend_each(mine, NAMES, 1, ([3], 1.0, 70_000))
    assert mine.ids.tolist() == [9, 1, 2, 3] and mine.times.tolist() == [1.0]
    with pytest.raises(TypeError, match="a tuple of names"):
        kernel().extend_each(mine, list(NAMES), 1, ([3], 1.0, 1))
    view = memoryview(mine.times)  # exporting its buffer: the array's extend, and its error
    with pytest.raises(BufferError):
        kernel().extend_each(mine, NAMES, 1, ([4], 2.0, 1))
    view.release()
    assert mine.ids.tolist() == [9, 1, 2, 3, 4] and mine.times.tolist() == [1.0]
