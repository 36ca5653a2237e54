# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The load fields in C: `streaming.core.traffic.member_rates`' least and most member, and
`streaming.core.cost.lag_added`. The Python functions are the spec and the pure fallback
(tests/core/test_load_kernel.py runs both side by side); a record's fields cost one call here instead of a
`math.fsum` per member and a list of rates per paused partition.

Every sum is exact, as `math.fsum`'s: the terms (doubles >= 0) are added as integers on a common scale, their
least unit, in 128-bit accumulators, and the exact sum is rounded once to the nearest double, ties to even (what
fsum returns). A call answers None, and the spec runs, where that scale does not fit 128 bits (terms spanning
more than about 70 binary orders of magnitude), where a term is negative or not finite, where a rounded sum
would fall below the smallest normal double, or where the arrays do not fit each other.
"""

from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBUF_FORMAT, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from libc.math cimport ldexp

cdef extern from *:
    """
    typedef unsigned __int128 load_u128;
    static inline int load_bitlen64(unsigned long long x) { return x ? 64 - __builtin_clzll(x) : 0; }
    """
    ctypedef unsigned long long load_u128  # C: unsigned __int128; Cython only needs integer arithmetic on it
    int load_bitlen64(unsigned long long x) nogil

cdef enum:
    STACK_CELLS = 256  # members (or paused partitions) whose accumulators (terms) live on the stack
    ACC_BITS = 126  # the largest term's top bit plus the count's bits stay below this: sums never wrap
    BIAS = 1075  # a double with exponent field e >= 1 is (2^52 + fraction) * 2^(e - BIAS); a subnormal, e = 1


cdef struct Scale:
    int low  # least exponent field of a nonzero term (a subnormal's counts as 1): the sum's unit is 2^(low - BIAS)
    int high  # greatest exponent field of a nonzero term (low > high: every term is zero)
    bint bad  # a term negative, infinite or NaN


cdef inline uint64_t _bits(double x) noexcept nogil:
    cdef uint64_t bits
    memcpy(&bits, &x, 8)
    return bits


cdef inline void _see(Scale *s, double x) noexcept nogil:
    cdef uint64_t bits = _bits(x)
    if (bits << 1) == 0:  # 0.0 or -0.0
        return
    cdef int field = <int> (bits >> 52)  # with the sign bit: a negative term reads >= 0x800
    if field >= 0x7ff:
        s.bad = True
        return
    if field == 0:
        field = 1
    if field < s.low:
        s.low = field
    if field > s.high:
        s.high = field


cdef inline bint _fits(Scale *s, Py_ssize_t terms) noexcept nogil:
    """Whether `terms` terms of this scale add up exactly in 128 bits."""
    if s.bad:
        return False
    return s.low > s.high or (s.high - s.low + 53) + load_bitlen64(<unsigned long long> terms + 1) <= ACC_BITS


cdef inline load_u128 _scaled(double x, int low) noexcept nogil:
    """`x` (seen by a `Scale` that fits) in units of 2^(low - BIAS)."""
    cdef uint64_t bits = _bits(x)
    if (bits << 1) == 0:
        return 0
    cdef int field = <int> (bits >> 52)
    cdef uint64_t mantissa = bits & ((<uint64_t> 1 << 52) - 1)
    if field:
        mantissa |= <uint64_t> 1 << 52
    else:
        field = 1
    return (<load_u128> mantissa) << (field - low)


cdef inline int _bitlen(load_u128 v) noexcept nogil:
    cdef unsigned long long high = <unsigned long long> (v >> 64)
    if high:
        return 64 + load_bitlen64(high)
    return load_bitlen64(<unsigned long long> v)


cdef inline bint _rounded(load_u128 total, int unit, double *out) noexcept nogil:
    """`total * 2^unit` rounded to the nearest double, ties to even; False where that would be subnormal or
    past the largest double."""
    if total == 0:
        out[0] = 0.0
        return True
    cdef int bits = _bitlen(total)
    cdef int shift = bits - 53
    cdef uint64_t mantissa
    cdef load_u128 rest, half
    if unit + bits > 1024:  # past the largest double (fsum raises OverflowError)
        return False
    if shift <= 0:  # exact: a multiple of the least subnormal below 2^53 units, which a double holds
        out[0] = ldexp(<double> <uint64_t> total, unit)
        return True
    mantissa = <uint64_t> (total >> shift)
    rest = total & (((<load_u128> 1) << shift) - 1)
    half = (<load_u128> 1) << (shift - 1)
    if rest > half or (rest == half and (mantissa & 1)):
        mantissa += 1
        if mantissa == (<uint64_t> 1 << 53):
            mantissa >>= 1
            shift += 1
    if unit + shift + 52 < -1022 or unit + shift + 53 > 1024:  # subnormal: rounding twice; or past the largest
        return False
    out[0] = ldexp(<double> mantissa, unit + shift)
    return True


cdef bint _borrow(object array, Py_buffer *view, char kind, Py_ssize_t itemsize) noexcept:
    """`array`'s memory (one dimension, contiguous, items `kind` of `itemsize` bytes: numpy's int32 'i', float64
    'd'); False, nothing held, for any other array. A typed memoryview would cost more per call than the sums."""
    try:
        PyObject_GetBuffer(array, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)
    except (BufferError, TypeError, ValueError):  # not an array, or not contiguous
        return False
    if view.ndim == 1 and view.itemsize == itemsize and view.format != NULL and view.format[0] == kind \
            and view.format[1] == 0:
        return True
    PyBuffer_Release(view)
    return False


def member_extremes(owner, rates, Py_ssize_t num_members):
    """`(min, max)` of `member_rates(owner, rates, num_members)` ((0.0, 0.0) without members; `owner` int32 and
    `rates` float64 numpy arrays); None where the spec must answer (see the module's docstring), and where an
    owner is not below `num_members`."""
    cdef Py_buffer owner_view, rates_view
    if not _borrow(owner, &owner_view, b'i', 4):
        return None
    if not _borrow(rates, &rates_view, b'd', 8):
        PyBuffer_Release(&owner_view)
        return None
    cdef double least = 0.0, most = 0.0
    cdef int found = 0
    try:
        if rates_view.shape[0] == owner_view.shape[0] and num_members >= 0:
            found = _extremes(<const int32_t *> owner_view.buf, <const double *> rates_view.buf,
                              owner_view.shape[0], num_members, &least, &most)
    finally:
        PyBuffer_Release(&owner_view)
        PyBuffer_Release(&rates_view)
    if found < 0:
        raise MemoryError()
    return (least, most) if found else None


cdef int _extremes(const int32_t *owner, const double *rates, Py_ssize_t size, Py_ssize_t num_members,
                   double *least, double *most) noexcept nogil:
    """1: `least` and `most` set; 0: the spec must answer; -1: out of memory."""
    cdef Py_ssize_t p, m, low = 0, high = 0
    cdef int32_t o
    if num_members == 0:
        least[0] = most[0] = 0.0
        return 1
    cdef Scale scale
    scale.low, scale.high, scale.bad = 0x7ff, 0, False
    for p in range(size):
        o = owner[p]
        if o >= num_members:
            return 0
        if o >= 0:
            _see(&scale, rates[p])
    if not _fits(&scale, size):
        return 0
    cdef load_u128 stack[STACK_CELLS]
    cdef load_u128 *load = stack
    if num_members > STACK_CELLS:
        load = <load_u128 *> malloc(num_members * sizeof(load_u128))
        if load == NULL:
            return -1
    for m in range(num_members):
        load[m] = 0
    for p in range(size):
        o = owner[p]
        if o >= 0:
            load[o] += _scaled(rates[p], scale.low)
    for m in range(1, num_members):
        if load[m] < load[low]:
            low = m
        if load[m] > load[high]:
            high = m
    cdef int found = (_rounded(load[low], scale.low - BIAS, least)
                      and _rounded(load[high], scale.low - BIAS, most))
    if load != stack:
        free(load)
    return found


def lag_added(rates, before, after, double ms):
    """`streaming.core.cost.lag_added` of the partitions held `before` (>= 0) that `after` gives another owner
    (`after` None: every one held): the exact sum of `rate * ms / 1000.0` over them, rounded once (`rates` float64,
    `before` and `after` int32 numpy arrays); None where the spec must answer (see the module's docstring)."""
    cdef Py_buffer rates_view, before_view, after_view
    cdef bint eager = after is None
    if not _borrow(rates, &rates_view, b'd', 8):
        return None
    if not _borrow(before, &before_view, b'i', 4):
        PyBuffer_Release(&rates_view)
        return None
    if not eager and not _borrow(after, &after_view, b'i', 4):
        PyBuffer_Release(&rates_view)
        PyBuffer_Release(&before_view)
        return None
    cdef double out = 0.0
    cdef int found = 0
    cdef const int32_t *after_owners = NULL
    try:
        if not eager:
            after_owners = <const int32_t *> after_view.buf
        if rates_view.shape[0] == before_view.shape[0] and (eager or after_view.shape[0] == before_view.shape[0]):
            found = _lag(<const double *> rates_view.buf, <const int32_t *> before_view.buf, after_owners,
                         before_view.shape[0], ms, &out)
    finally:
        PyBuffer_Release(&rates_view)
        PyBuffer_Release(&before_view)
        if not eager:
            PyBuffer_Release(&after_view)
    if found < 0:
        raise MemoryError()
    return out if found else None


cdef int _lag(const double *rates, const int32_t *before, const int32_t *after, Py_ssize_t size, double ms,
              double *out) noexcept nogil:
    """1: `out` set; 0: the spec must answer; -1: out of memory (`after` NULL: every partition held pauses)."""
    cdef Py_ssize_t p, n = 0
    cdef double stack[STACK_CELLS]
    cdef double *terms = stack
    if size > STACK_CELLS:
        terms = <double *> malloc(size * sizeof(double))
        if terms == NULL:
            return -1
    cdef Scale scale
    scale.low, scale.high, scale.bad = 0x7ff, 0, False
    cdef load_u128 total = 0
    for p in range(size):
        if before[p] >= 0 and (after == NULL or before[p] != after[p]):
            terms[n] = rates[p] * ms / 1000.0
            _see(&scale, terms[n])
            n += 1
    cdef int found = _fits(&scale, n)
    if found:
        for p in range(n):
            total += _scaled(terms[p], scale.low)
        found = _rounded(total, scale.low - BIAS, out)
    if terms != stack:
        free(terms)
    return found
