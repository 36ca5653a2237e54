# cython: language_level=3, boundscheck=False, wraparound=False
"""`assignors.optimality.TopicGroups.tally` in C: a small round's `Counts` (four ints per distinct (topic,
previous owner, new owner) triple) tallied over topic groups. The Python method is the spec and the pure
fallback (tests/assignors/test_tally_kernel.py runs both side by side); compiled by mypyc, its per-triple
tagged-int arithmetic and list updates cost far more per triple than typed C."""

from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_FromLongLong
from cpython.ref cimport Py_INCREF
from libc.stdlib cimport calloc, free
from libc.string cimport memset

ctypedef long long ll

cdef enum:
    STACK_CELLS = 512  # tables up to this many counts live on the stack (a round of the replay: a few dozen)


cdef list _listed(const ll *values, Py_ssize_t size):
    """`values` as a list of ints, filled in place (a comprehension appends)."""
    cdef list out = PyList_New(size)
    cdef Py_ssize_t i
    cdef object value
    for i in range(size):
        value = PyLong_FromLongLong(values[i])
        Py_INCREF(value)  # the list's reference
        PyList_SET_ITEM(out, i, value)
    return out


def tally(list counts, list topic_group, list allowed, Py_ssize_t num_members, Py_ssize_t num_groups,
          ll num_topics):
    """`TopicGroups.tally`'s tuple, from the groups' `topic_group` and `allowed` tables; None when a triple is out
    of range (the caller raises the error the Python method raises)."""
    cdef Py_ssize_t k, entries = len(counts)
    if entries % 4:
        raise IndexError("tally: counts of four ints per triple")
    cdef Py_ssize_t cells = num_members + num_groups + num_groups * num_members
    cdef ll stack[STACK_CELLS]
    cdef ll *table = stack
    if cells > STACK_CELLS:
        table = <ll *> calloc(cells, sizeof(ll))
        if table == NULL:
            raise MemoryError()
    else:
        memset(stack, 0, cells * sizeof(ll))
    cdef ll *load = table
    cdef ll *size = table + num_members
    cdef ll *keep = size + num_groups
    cdef ll t, p, n, count, last = -1, g = -1, row = 0, held = 0
    cdef ll total_owned = 0, moved = 0, unassigned = 0
    cdef bint outside = False
    try:
        for k in range(0, entries, 4):
            t, p, n, count = counts[k], counts[k + 1], counts[k + 2], counts[k + 3]
            if not (-1 <= p < num_members and -1 <= n < num_members and 0 <= t < num_topics):
                return None
            if t != last:  # a topic's triples come together: its group is read and its size added once
                if g >= 0:
                    size[g] += held
                last, g, held = t, <ll> topic_group[t], 0
                row = g * num_members
            held += count
            if n >= 0:
                load[n] += count
                if g < 0 or allowed[row + n] is not True:
                    outside = True
            elif g >= 0:
                unassigned += count
            if p >= 0:
                total_owned += count
                if n != p:
                    moved += count
                if g >= 0 and allowed[row + p] is True:
                    keep[row + p] += count
        if g >= 0:
            size[g] += held
        return (_listed(load, num_members), _listed(size, num_groups), _listed(keep, num_groups * num_members),
                total_owned, moved, unassigned, outside)
    finally:
        if table != stack:
            free(table)
