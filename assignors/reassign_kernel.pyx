# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""`assignors.sticky_engine.general.GeneralAssignmentBuilder.build` in C, without rack logic: Kafka's general
assignment (keep owned, hand out the unassigned, `isBalanced`, `performReassignments` with `PartitionMovements`, the
revert rule) over C arrays. The Python builder and `Reassignment` are the specification: each step below is theirs,
in the same order, with the same tie-breaks (tests/assignors/test_general_kernel.py runs both side by side); where
this kernel is built, `run_engine` runs it for every general group without rack logic. One call takes the group's
topics, subscriptions and claims (the tables the Python steps read from `GroupTables.subscription_tables` are made
here) and returns the owners and their places in Kafka's lists as int32 bytes, which numpy reads without a copy.

Differences of representation only: holdings are a topic x member count table (the Python dicts' order is
never read: `max` and counts), a member's held topics are the movable topics it holds a partition of
(each one is updated independently, so the walk order does not matter), and a `HashSet` of moved
partitions is the partitions of its topic recorded under its pair (each partition is in one set at most),
with its capacity kept per set. A pass's start state (`PartitionMovements.order_key`) is serialised
injectively (each set: topic, pair, capacity, length, elements in iteration order) and compared exactly. Before
any move, `isBalanced` is first asked over the sizes alone (no holdings counted when it holds)."""

from libc.stdlib cimport malloc, realloc, free
from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBUF_FORMAT, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.string cimport memcmp, memcpy, memset, strlen

ctypedef long long ll

cdef enum:
    FIXED_PREV = -2  # `sticky_engine.balance.FIXED_PREV`
    NO_TARGET = -1
    THROWN = -3  # a partition whose prevAssignment owner is fixed was looked at


cdef class _Build:
    """One call's arrays (freed with the object, also when an input is refused)."""

    cdef int nm, npart, nt, n_mov, nsets, n_unb, err_pid, err_owner, next_stamp, n_moved, n_seen
    cdef ll seq
    cdef char *arena  # one block for the call's arrays (`take`), made once their sizes are known
    cdef size_t used, cap
    cdef void *blocks[64]  # arrays past the arena (not expected: its size is an upper bound)
    cdef int n_blocks
    # tables
    cdef char *flags  # member x topic: subscribes
    cdef int *ptopic
    cdef int *starts  # per topic its first global id, and the end
    cdef ll *thash
    cdef int *sub_at  # per topic its slice of `subs` (subscribers in member id order)
    cdef int *subs
    cdef int *maxs
    cdef int *rank
    cdef char *mov  # topic with two or more subscribers
    cdef int *mov_topics  # those, ascending
    cdef int *mo_at  # per member its slice of `mo` (its movable topics, ascending)
    cdef int *mo
    # the builder's state
    cdef int *owner
    cdef int *sizes
    cdef int *base_stamp  # each partition's place in its owner's list before any move
    # `Reassignment`'s state
    cdef int *wowner
    cdef int *wsizes
    cdef int *prev
    cdef int *hold  # topic x member: partitions held
    cdef int *most
    cdef int *n_most
    cdef int *least
    cdef int *n_least
    cdef int *n_full
    cdef char *unb
    cdef int *at_size
    cdef int *changed
    cdef int *stamp  # moved partition -> its stamp (-1: not moved)
    cdef int *moved  # moved partitions in first-move order
    # `PartitionMovements`
    cdef ll *rec  # partition -> its pair (-1: none)
    cdef ll *seqs
    cdef ll *spread
    cdef int *set_t
    cdef ll *set_pair
    cdef int *set_cap
    cdef int *set_n
    # pass inputs and seen states
    cdef int *runs
    cdef int *with_prev
    cdef ll *state
    cdef ll *seen
    cdef ll *seen_at  # per seen state: offset, length, hash
    cdef ll seen_cap, seen_len, seen_at_cap

    def __dealloc__(self):
        cdef int i
        for i in range(self.n_blocks):
            free(self.blocks[i])
        free(self.arena)
        free(self.seen)
        free(self.seen_at)

    cdef void *take(self, size_t n) except NULL:
        cdef void *p
        n = (n + 7) & ~(<size_t> 7)  # 8-byte aligned
        if self.used + n <= self.cap:
            p = self.arena + self.used
            self.used += n
            return p
        if self.n_blocks == 64:
            raise MemoryError("reassign_kernel: arena too small")
        p = malloc(n if n else 8)
        if p == NULL:
            raise MemoryError()
        self.blocks[self.n_blocks] = p
        self.n_blocks += 1
        return p

    cdef int *ints(self, Py_ssize_t n) except NULL:
        return <int *> self.take(<size_t> n * sizeof(int))

    cdef int *zeros(self, Py_ssize_t n) except NULL:
        cdef int *p = self.ints(n)
        memset(p, 0, <size_t> n * sizeof(int))
        return p

    cdef ll *lls(self, Py_ssize_t n) except NULL:
        return <ll *> self.take(<size_t> n * sizeof(ll))

    # -- `PartitionMovements` -------------------------------------------------------------------------

    cdef int find_set(self, int t, ll pair):
        cdef int s
        for s in range(self.nsets):
            if self.set_n[s] and self.set_t[s] == t and self.set_pair[s] == pair:
                return s
        return -1

    cdef int first(self, int s):
        """`_JavaHashSet.first`: the least (bucket, sequence) of the set."""
        cdef int t = self.set_t[s], p, best = -1
        cdef ll pair = self.set_pair[s], mask = self.set_cap[s] - 1, bucket, low = 0
        for p in range(self.starts[t], self.starts[t + 1]):
            if self.rec[p] == pair:
                bucket = self.spread[p] & mask
                if best < 0 or bucket < low or (bucket == low and self.seqs[p] < self.seqs[best]):
                    best, low = p, bucket
        return best

    cdef void add(self, int pid, int t, ll pair):
        """`PartitionMovements._add` and `_JavaHashSet.add`."""
        cdef int s = self.find_set(t, pair), n, count, p, cap
        cdef ll mask, bucket
        if s < 0:
            for s in range(self.nsets + 1):
                if s == self.nsets or not self.set_n[s]:
                    break
            if s == self.nsets:
                self.nsets += 1
            self.set_t[s], self.set_pair[s], self.set_cap[s], self.set_n[s] = t, pair, 16, 0
        self.rec[pid] = pair
        self.seq += 1
        self.seqs[pid] = self.seq
        self.set_n[s] += 1
        n, cap = self.set_n[s], self.set_cap[s]
        if n > 8 and cap < 64:
            mask = cap - 1
            bucket = self.spread[pid] & mask
            count = 0
            for p in range(self.starts[t], self.starts[t + 1]):
                if self.rec[p] == pair and (self.spread[p] & mask) == bucket:
                    count += 1
            if count >= 9:
                cap *= 2
        if n > cap * 3 // 4:
            cap *= 2
        self.set_cap[s] = cap

    cdef void remove(self, int pid, int t, ll pair):
        self.set_n[self.find_set(t, pair)] -= 1
        self.rec[pid] = -1

    cdef int actual_partition(self, int pid, int t, int old, int new):
        cdef int s
        if self.rec[pid] >= 0:
            old = <int> (self.rec[pid] // self.nm)
        s = self.find_set(t, <ll> new * self.nm + old)
        return pid if s < 0 else self.first(s)

    cdef void move(self, int pid, int t, int old, int new):
        cdef ll r = self.rec[pid]
        cdef int first
        if r < 0:
            self.add(pid, t, <ll> old * self.nm + new)
        else:
            self.remove(pid, t, r)
            first = <int> (r // self.nm)
            if first != new:
                self.add(pid, t, <ll> first * self.nm + new)

    cdef ll order_key(self) except -1:
        """`PartitionMovements.order_key` serialised into `state`; its length."""
        cdef int s, i, j, t, p, n, c
        cdef ll at = 0, key, mask, pair, span = self.seq + 1  # sequence numbers are below span
        cdef int *live = self.runs + 3 * self.npart  # scratch past the runs (see `general_build`)
        n = 0
        for s in range(self.nsets):
            if self.set_n[s]:
                live[n] = s
                n += 1
        for i in range(1, n):  # insertion sort by (topic, pair): a few sets
            s = live[i]
            j = i - 1
            while j >= 0 and (self.set_t[live[j]] > self.set_t[s] or (
                    self.set_t[live[j]] == self.set_t[s] and self.set_pair[live[j]] > self.set_pair[s])):
                live[j + 1] = live[j]
                j -= 1
            live[j + 1] = s
        for i in range(n):
            s = live[i]
            t, pair, mask = self.set_t[s], self.set_pair[s], self.set_cap[s] - 1
            self.state[at] = t
            self.state[at + 1] = pair
            self.state[at + 2] = self.set_cap[s]
            self.state[at + 3] = self.set_n[s]
            at += 4
            c = 0
            for p in range(self.starts[t], self.starts[t + 1]):
                if self.rec[p] == pair:
                    key = ((self.spread[p] & mask) * span + self.seqs[p]) * self.npart + p
                    j = c - 1  # insertion sort by (bucket, sequence)
                    while j >= 0 and self.state[at + j] > key:
                        self.state[at + j + 1] = self.state[at + j]
                        j -= 1
                    self.state[at + j + 1] = key
                    c += 1
            for j in range(c):
                self.state[at + j] %= self.npart
            at += c
        return at

    cdef int seen_before(self, ll length) except -1:
        """Is `state` one of the seen states (1)? If not (0), it is added."""
        cdef unsigned long long u = 1469598103934665603ULL
        cdef ll h, i, off
        for i in range(length):  # FNV-1a over the serialised state
            u = (u ^ <unsigned long long> self.state[i]) * 1099511628211ULL
        h = <ll> u
        for i in range(self.n_seen):
            if self.seen_at[3 * i + 2] == h and self.seen_at[3 * i + 1] == length and memcmp(
                    self.seen + self.seen_at[3 * i], self.state, <size_t> length * sizeof(ll)) == 0:
                return 1
        if self.seen_len + length > self.seen_cap:
            self.seen_cap = 2 * (self.seen_len + length) + 64
            off = <ll> realloc(self.seen, <size_t> self.seen_cap * sizeof(ll))
            if not off:
                raise MemoryError()
            self.seen = <ll *> off
        if 3 * (self.n_seen + 1) > self.seen_at_cap:
            self.seen_at_cap = 6 * (self.n_seen + 1) + 24
            off = <ll> realloc(self.seen_at, <size_t> self.seen_at_cap * sizeof(ll))
            if not off:
                raise MemoryError()
            self.seen_at = <ll *> off
        memcpy(self.seen + self.seen_len, self.state, <size_t> length * sizeof(ll))
        self.seen_at[3 * self.n_seen] = self.seen_len
        self.seen_at[3 * self.n_seen + 1] = length
        self.seen_at[3 * self.n_seen + 2] = h
        self.seen_len += length
        self.n_seen += 1
        return 0

    # -- `Reassignment` -------------------------------------------------------------------------------

    cdef bint breaks(self, int t):
        cdef int most = self.most[t], low, i, m, size
        if most <= self.least[t] + 1:
            return False
        if not self.n_full[t]:
            return True
        low = most
        for i in range(self.sub_at[t], self.sub_at[t + 1]):
            m = self.subs[i]
            size = self.wsizes[m]
            if size < low and size != self.maxs[m]:
                low = size
        return most > low + 1

    cdef void judge(self, int t):
        cdef bint flag = self.most[t] > self.least[t] + 1 and (not self.n_full[t] or self.breaks(t))
        if flag and not self.unb[t]:
            self.n_unb += 1
        elif not flag and self.unb[t]:
            self.n_unb -= 1
        self.unb[t] = flag

    cdef int most_count(self, int t, int size):
        cdef int n = self.n_most[t], m
        cdef int *row
        if n < 0:
            if self.at_size[size] == 1:
                n = 1
            else:
                n = 0
                row = self.hold + <Py_ssize_t> t * self.nm
                for m in range(self.nm):
                    if row[m] and self.wsizes[m] == size:
                        n += 1
            self.n_most[t] = n
        return n

    cdef int target(self, int p, int t, int limit):
        cdef int size = self.wsizes[self.wowner[p]], back = self.prev[p], i, m
        if back != -1:
            if back == FIXED_PREV:
                self.err_pid, self.err_owner = p, self.wowner[p]
                return THROWN
            if size > self.wsizes[back] + 1:
                return back
        if size > limit:
            for i in range(self.sub_at[t], self.sub_at[t + 1]):
                m = self.subs[i]
                if self.wsizes[m] == limit - 1:
                    return m
        return NO_TARGET

    cdef void reassign(self, int p, int t, int target):
        cdef int q = self.actual_partition(p, t, self.wowner[p], target)
        cdef int old = self.wowner[q]
        self.move(q, t, old, target)
        self.wowner[q] = target
        if self.stamp[q] < 0:
            self.moved[self.n_moved] = q
            self.n_moved += 1
        self.stamp[q] = self.next_stamp
        self.next_stamp += 1
        self.moved_sizes(old, target, t)

    cdef void moved_sizes(self, int old, int new, int t):
        """`Reassignment._moved`."""
        cdef int *sizes = self.wsizes
        cdef int *most = self.most
        cdef int *n_most = self.n_most
        cdef int *least = self.least
        cdef int *n_least = self.n_least
        cdef int *n_full = self.n_full
        cdef int *hold = self.hold
        cdef int *changed = self.changed
        cdef int so = sizes[old], sn = sizes[new], down = so - 1, up = sn + 1, nc = 1, n, i, k, m, top, step
        cdef int high, nm = self.nm
        cdef bint recount = False, any_at
        changed[0] = t
        n = hold[t * nm + old]
        if n == 1:
            if so == most[t]:
                recount = self.most_count(t, so) == 1
                n_most[t] -= 1
            hold[t * nm + old] = 0
        else:
            hold[t * nm + old] = n - 1
        n = hold[t * nm + new]
        if n:
            hold[t * nm + new] = n + 1
        else:
            hold[t * nm + new] = 1
            if sn > most[t]:
                most[t], n_most[t] = sn, 1
            elif sn == most[t] and n_most[t] >= 0:
                n_most[t] += 1
        if recount:
            high = -1
            for m in range(nm):
                if hold[t * nm + m] and sizes[m] > high:
                    high = sizes[m]
            most[t], n_most[t] = high, -1
        for i in range(self.n_mov):
            k = self.mov_topics[i]
            if hold[k * nm + old] and so == most[k]:
                n = n_most[k]
                if n < 0:
                    n = self.most_count(k, so)
                if n == 1:
                    most[k], n_most[k] = down, -1
                    changed[nc] = k
                    nc += 1
                else:
                    n_most[k] = n - 1
        sizes[old] = down
        for i in range(self.n_mov):
            k = self.mov_topics[i]
            if hold[k * nm + new]:
                if sn == most[k]:
                    most[k], n_most[k] = up, 1
                    changed[nc] = k
                    nc += 1
                elif up == most[k] and n_most[k] > 0:
                    n_most[k] += 1
        sizes[new] = up
        self.at_size[so] -= 1
        self.at_size[sn] -= 1
        self.at_size[down] += 1
        self.at_size[up] += 1
        for i in range(self.mo_at[old], self.mo_at[old + 1]):
            k = self.mo[i]
            if so == least[k]:
                least[k], n_least[k] = down, 1
                changed[nc] = k
                nc += 1
            elif down == least[k] and n_least[k] > 0:
                n_least[k] += 1
            if n_full[k]:
                changed[nc] = k
                nc += 1
        for i in range(self.mo_at[new], self.mo_at[new + 1]):
            k = self.mo[i]
            if sn == least[k]:
                n = n_least[k]
                if n > 1:
                    n_least[k] = n - 1
                else:
                    any_at = False
                    if n != 1:
                        for m in range(self.sub_at[k], self.sub_at[k + 1]):
                            if sizes[self.subs[m]] == sn:
                                any_at = True
                                break
                    if not any_at:
                        least[k], n_least[k] = up, -1
                        changed[nc] = k
                        nc += 1
            if n_full[k]:
                changed[nc] = k
                nc += 1
        top = self.maxs[old]
        if so == top or down == top:
            step = -1 if so == top else 1
            for i in range(self.mo_at[old], self.mo_at[old + 1]):
                k = self.mo[i]
                n_full[k] += step
                changed[nc] = k
                nc += 1
        top = self.maxs[new]
        if sn == top or up == top:
            step = -1 if sn == top else 1
            for i in range(self.mo_at[new], self.mo_at[new + 1]):
                k = self.mo[i]
                n_full[k] += step
                changed[nc] = k
                nc += 1
        for i in range(nc):
            self.judge(changed[i])

    cdef int one_pass(self, int *parts, int n_runs, int n_with):
        """`Reassignment._pass` (1: something moved, 0: nothing, THROWN)."""
        cdef int r, t, i, end, limit, target, j = 0, w, w_end
        cdef bint modified = False
        for r in range(n_runs):
            t, i, end = self.runs[3 * r], self.runs[3 * r + 1], self.runs[3 * r + 2]
            while i < end and self.n_unb:
                limit = self.least[t] + 1
                target = NO_TARGET
                if self.most[t] > limit:
                    for j in range(i, end):
                        target = self.target(parts[j], t, limit)
                        if target != NO_TARGET:
                            break
                elif n_with:
                    w = 0  # bisect_left(with_prev, i) .. bisect_left(with_prev, end)
                    while w < n_with and self.with_prev[w] < i:
                        w += 1
                    w_end = w
                    while w_end < n_with and self.with_prev[w_end] < end:
                        w_end += 1
                    for w in range(w, w_end):
                        j = self.with_prev[w]
                        target = self.target(parts[j], t, limit)
                        if target != NO_TARGET:
                            break
                if target == THROWN:
                    return THROWN
                if target < 0:
                    break
                self.reassign(parts[j], t, target)
                modified = True
                i = j + 1
            if not self.n_unb:
                break
        return modified

    cdef int perform(self, int *parts, int n) except -2:
        """`Reassignment.perform` (1: performed, 0: not, THROWN)."""
        cdef int i, t, n_runs = 0, n_with = 0, got
        cdef bint performed = False
        if not n or not self.n_unb:
            return 0
        for i in range(n):  # `_list_runs`, and the positions with a prevAssignment entry
            t = self.ptopic[parts[i]]
            if not n_runs or self.runs[3 * (n_runs - 1)] != t:
                if n_runs:
                    self.runs[3 * (n_runs - 1) + 2] = i
                self.runs[3 * n_runs], self.runs[3 * n_runs + 1] = t, i
                n_runs += 1
            if self.prev[parts[i]] != -1:
                self.with_prev[n_with] = i
                n_with += 1
        self.runs[3 * (n_runs - 1) + 2] = n
        self.n_seen = 0
        self.seen_len = 0
        self.seen_before(self.order_key())
        while True:
            got = self.one_pass(parts, n_runs, n_with)
            if got == THROWN:
                return THROWN
            if not got:
                break
            performed = True
            if not self.n_unb:
                break
            if self.seen_before(self.order_key()):
                break
        return performed


cdef int _fill(int *out, list values, Py_ssize_t n) except -1:
    cdef Py_ssize_t i
    if len(values) != n:
        raise ValueError("table length")
    for i in range(n):
        out[i] = values[i]
    return 0


cdef ll _balance_score(int *sizes, int *members, int n, int *scratch):
    """`sticky_engine.balance.balance_score` of the members' sizes."""
    cdef int i, j, v
    cdef ll score = 0
    for i in range(n):
        v = sizes[members[i]]
        j = i - 1
        while j >= 0 and scratch[j] > v:
            scratch[j + 1] = scratch[j]
            j -= 1
        scratch[j + 1] = v
    for i in range(n):
        score += <ll> scratch[i] * (2 * i - n + 1)
    score &= 0xFFFFFFFFLL
    return score - (1LL << 32) if score & 0x80000000LL else score


cdef void _sift_down(ll *heap, int at, int n):
    """Restore the min-heap order below `at` (`heapq`'s invariant; the keys are distinct)."""
    cdef ll key = heap[at]
    cdef int child
    while True:
        child = 2 * at + 1
        if child >= n:
            break
        if child + 1 < n and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= key:
            break
        heap[at] = heap[child]
        at = child
    heap[at] = key


cdef tuple _result(_Build b, int *owner, bint keep, list leader):
    """`general_build`'s answer: `owner` (the builder's or the reassignment's) and the stamps, with the moves if
    kept."""
    cdef bytes codes = PyBytes_FromStringAndSize(NULL, 4 * b.npart)
    cdef bytes in_member_order = codes
    cdef bytes stamps = PyBytes_FromStringAndSize(NULL, 4 * b.npart)
    cdef int *out
    cdef int *member
    cdef int i, m
    memcpy(PyBytes_AS_STRING(codes), owner, 4 * b.npart)
    out = <int *> PyBytes_AS_STRING(stamps)
    memcpy(out, b.base_stamp, 4 * b.npart)
    if keep:
        for i in range(b.n_moved):
            out[b.moved[i]] = b.stamp[b.moved[i]]
    if leader is not None:
        member = b.ints(b.nm)
        _fill(member, leader, b.nm)
        in_member_order = PyBytes_FromStringAndSize(NULL, 4 * b.npart)
        out = <int *> PyBytes_AS_STRING(in_member_order)
        for i in range(b.npart):
            m = owner[i]
            out[i] = member[m] if m >= 0 else -1
    return codes, in_member_order, stamps, b.err_pid, b.err_owner


cdef int _read_topics(object topics, int *out, Py_ssize_t n) except -1:
    """A member's `GroupSpec.member_topics` array (int32 as made, int64, strided: any sequence of n ints) into
    `out`."""
    cdef Py_buffer view
    cdef Py_ssize_t i
    cdef char kind
    try:
        PyObject_GetBuffer(topics, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS)
    except (BufferError, TypeError, ValueError):  # not a buffer, or not a contiguous one
        for i in range(n):
            out[i] = topics[i]
        return 0
    try:
        kind = view.format[strlen(view.format) - 1] if view.format != NULL else c'B'
        if view.len != n * view.itemsize:
            raise ValueError("member_topics: a one-dimensional array expected")
        if view.itemsize == 4 and kind == c'i':
            memcpy(out, view.buf, <size_t> n * 4)
        elif view.itemsize == 8 and (kind == c'l' or kind == c'q'):
            for i in range(n):
                out[i] = <int> (<ll *> view.buf)[i]
        else:
            for i in range(n):
                out[i] = topics[i]
    finally:
        PyBuffer_Release(&view)
    return 0


def general_build(list own_by_member, list member_topics, list topics_by_name, list rank, list starts,
                  list topic_hash, list generations, list owned_lists, list leader):
    """`GeneralAssignmentBuilder.build` (members in the builder's order): the tables it reads from
    `GroupTables.subscription_tables` are made here from `GroupSpec.member_topics`, `GroupTables.topics_by_name` (the
    subscribed topics in Java name order), `id_rank_list` and the topic starts and name hashes
    (`GroupTables.topic_lists`); the call's own inputs are `RoundContext`'s `own_by_member`, `generations` and
    `GroupSpec.owned_lists`; `leader`: `GroupTables.leader_list`, None when the builder's order is the member order.
    Returns (the owner per global id as int32 bytes, in the builder's member indices and in member order, each
    partition's place in its owner's list as int32 bytes, a partition whose fixed prevAssignment owner Java looked up
    or -1, that partition's owner then): `build_in_kernel` raises `fixed_prev_error` on it."""
    cdef _Build b = _Build()
    cdef int nm = len(member_topics), nt = len(starts) - 1, npart = starts[nt], n_all = 0
    cdef int i, j, m, p, t, n, kept = 0, first, best, size, high, low, n_high, n_low, n_un, n_ma, n_subs = 0
    cdef int n_active, top, max_gen, g, r, n_named = len(topics_by_name), end
    cdef ll *heap
    cdef bint revocation_required = False, initializing, performed, balanced
    cdef object topics
    cdef int *sorted_c
    cdef int *unassigned
    cdef int *movable_all
    cdef int *active
    cdef int *prev_gen
    cdef int *scratch
    cdef int *mt_at
    cdef int *mt
    cdef int *by_rank
    cdef char *reaching
    cdef ll before
    b.nm, b.npart, b.nt = nm, npart, nt
    b.err_pid, b.err_owner = -1, 0
    for m in range(nm):
        n_subs += len(member_topics[m])
    # an upper bound of what `take` hands out below (ints, long longs, chars, 8-byte rounding)
    b.cap = (4 * (10 * nm + 3 * n_subs + 22 * npart + 17 * nt + <size_t> nt * nm + 40)
             + 8 * (nt + 9 * npart + nm + 17) + <size_t> nm * nt + 2 * nt + nm + 64 * 8)
    b.arena = <char *> malloc(b.cap)
    if b.arena == NULL:
        raise MemoryError()
    b.starts = b.ints(nt + 1)
    _fill(b.starts, starts, nt + 1)
    b.ptopic = b.ints(npart)
    for t in range(nt):
        for p in range(b.starts[t], b.starts[t + 1]):
            b.ptopic[p] = t
    b.thash = b.lls(nt)
    for t in range(nt):
        b.thash[t] = topic_hash[t]
    b.rank = b.ints(nm)
    _fill(b.rank, rank, nm)
    # `GroupTables._make_subscription_tables`: each member's topics (an array shared by members read once), their
    # subscribers in member id order, each member's maximum size, and its subscribes flags (`topic_flags`)
    mt_at = b.ints(nm + 1)
    mt = b.ints(n_subs)
    b.flags = <char *> b.take(<size_t> nm * nt)
    memset(b.flags, 0, <size_t> nm * nt)
    b.maxs = b.zeros(nm)
    b.sub_at = b.zeros(nt + 1)
    n = 0
    for m in range(nm):
        mt_at[m] = n
        topics = member_topics[m]
        size = len(topics)
        for j in range(m):
            if member_topics[j] is topics:
                memcpy(mt + n, mt + mt_at[j], <size_t> size * sizeof(int))
                break
        else:
            _read_topics(topics, mt + n, size)
        for i in range(n, n + size):
            t = mt[i]
            if t < 0 or t >= nt:
                raise ValueError("member_topics: a topic index out of range")
            b.flags[<Py_ssize_t> m * nt + t] = 1
            b.maxs[m] += b.starts[t + 1] - b.starts[t]
            b.sub_at[t + 1] += 1
        n += size
    mt_at[nm] = n
    for t in range(nt):
        b.sub_at[t + 1] += b.sub_at[t]
    b.subs = b.ints(n_subs)
    by_rank = b.ints(nm)
    for m in range(nm):
        by_rank[b.rank[m]] = m
    scratch = b.ints(nt)  # next free place per topic
    memcpy(scratch, b.sub_at, <size_t> nt * sizeof(int))
    for r in range(nm):
        m = by_rank[r]
        for i in range(mt_at[m], mt_at[m + 1]):
            t = mt[i]
            b.subs[scratch[t]] = m
            scratch[t] += 1
    b.mov = <char *> b.take(nt)
    b.mov_topics = b.ints(nt)
    b.n_mov = 0
    for t in range(nt):
        b.mov[t] = b.sub_at[t + 1] - b.sub_at[t] >= 2
        if b.mov[t]:
            b.mov_topics[b.n_mov] = t
            b.n_mov += 1
    # all subscribed partitions, topics by (subscriber count, name): a stable counting sort of the name order
    sorted_c = b.ints(npart)
    high = 0
    for i in range(n_named):
        t = topics_by_name[i]
        if b.sub_at[t + 1] - b.sub_at[t] > high:
            high = b.sub_at[t + 1] - b.sub_at[t]
    for n in range(1, high + 1):
        for i in range(n_named):
            t = topics_by_name[i]
            if b.sub_at[t + 1] - b.sub_at[t] == n:
                for p in range(b.starts[t], b.starts[t + 1]):
                    sorted_c[n_all] = p
                    n_all += 1
    b.mo_at = b.ints(nm + 1)
    b.owner = b.ints(npart)
    for p in range(npart):
        b.owner[p] = -1
    b.sizes = b.zeros(nm)

    # step 2, `_assign_owned` (no rack logic)
    b.base_stamp = b.zeros(npart)
    for m in range(nm):
        first = kept
        for p in <list> own_by_member[m]:
            if b.flags[<Py_ssize_t> m * nt + b.ptopic[p]]:
                b.owner[p] = m
                b.base_stamp[p] = kept
                kept += 1
            else:
                revocation_required = True
        b.sizes[m] += kept - first
    b.next_stamp = kept
    initializing = not kept
    # step 3, and step 5 (`_assign_plain`): each topic run to the least (size, id rank), found by a scan of up
    # to 32 subscribers (`_heap_fill`), of more by a heap of `key * subscribers + position`
    unassigned = b.ints(n_all)
    n_un = 0
    for i in range(n_all):
        if b.owner[sorted_c[i]] < 0:
            unassigned[n_un] = sorted_c[i]
            n_un += 1
    heap = b.lls(nm + 1)
    i = 0
    while i < n_un:
        t = b.ptopic[unassigned[i]]
        end = i
        while end < n_un and b.ptopic[unassigned[end]] == t:
            end += 1
        first, n = b.sub_at[t], b.sub_at[t + 1] - b.sub_at[t]
        if n == 0:  # Java skips partitions of topics nobody can take
            i = end
            continue
        if n > 32:
            for j in range(n):
                m = b.subs[first + j]
                heap[j] = (<ll> b.sizes[m] * nm + b.rank[m]) * n + j
            for j in range(n // 2 - 1, -1, -1):
                _sift_down(heap, j, n)
        for i in range(i, end):
            p = unassigned[i]
            if n > 32:
                best = b.subs[first + <int> (heap[0] % n)]
                heap[0] += <ll> nm * n
                _sift_down(heap, 0, n)
            else:
                best = -1
                for j in range(first, first + n):
                    m = b.subs[j]
                    if best < 0 or b.sizes[m] < b.sizes[best] or (
                            b.sizes[m] == b.sizes[best] and b.rank[m] < b.rank[best]):
                        best = m
            b.owner[p] = best
            b.base_stamp[p] = b.next_stamp
            b.sizes[best] += 1
            b.next_stamp += 1
        i = end
    # `_movable`, `isBalanced`'s first test, and `isBalanced` before any move
    movable_all = b.ints(n_all)
    n_ma = 0
    for i in range(n_all):
        if b.mov[b.ptopic[sorted_c[i]]]:
            movable_all[n_ma] = sorted_c[i]
            n_ma += 1
    reaching = <char *> b.take(nm)
    b.mo = b.ints(b.sub_at[nt])
    n = 0
    for m in range(nm):
        b.mo_at[m] = n
        reaching[m] = False
        for i in range(b.n_mov):  # `GroupTables.movable_tables`: ascending
            t = b.mov_topics[i]
            if b.flags[<Py_ssize_t> m * nt + t]:
                b.mo[n] = t
                n += 1
                if b.starts[t + 1] > b.starts[t]:
                    reaching[m] = True
    b.mo_at[nm] = n
    active = b.ints(nm)
    n_active = 0
    high, low = -1, -1
    for m in range(nm):
        if b.sizes[m] < b.maxs[m] or reaching[m]:
            active[n_active] = m
            n_active += 1
            size = b.sizes[m]
            if high < 0 or size > high:
                high = size
            if low < 0 or size < low:
                low = size
    if not n_ma or high - low <= 1:
        return _result(b, b.owner, 0, leader)
    balanced = True
    for i in range(b.n_mov):
        t = b.mov_topics[i]
        high, low = -1, -1
        for j in range(b.sub_at[t], b.sub_at[t + 1]):
            m = b.subs[j]
            size = b.sizes[m]
            if size > high:
                high = size
            if size != b.maxs[m] and (low < 0 or size < low):
                low = size
        if low >= 0 and high > low + 1:
            for p in range(b.starts[t], b.starts[t + 1]):
                if b.sizes[b.owner[p]] > low + 1:
                    balanced = False
                    break
            if not balanced:
                break
    if balanced:
        return _result(b, b.owner, 0, leader)

    # step 1, `prev_assignment`, and the fixed prevAssignment owners (`Reassignment.__init__`)
    b.prev = b.ints(npart)
    prev_gen = b.ints(npart)
    for p in range(npart):
        b.prev[p], prev_gen[p] = -1, -2
    max_gen = generations[0]
    for g in generations:
        if g > max_gen:
            max_gen = g
    for m in range(len(owned_lists)):
        g = generations[m]
        if g < max_gen:
            for p in <list> owned_lists[m]:
                if b.prev[p] < 0 or g > prev_gen[p]:
                    b.prev[p], prev_gen[p] = m, g
    scratch = b.zeros(nm)  # in currentAssignment
    for i in range(n_active):
        scratch[active[i]] = 1
    for p in range(npart):
        if b.prev[p] >= 0 and not scratch[b.prev[p]]:
            b.prev[p] = FIXED_PREV

    # `Reassignment.__init__`, `_count_holdings`
    b.wowner = b.ints(npart)
    memcpy(b.wowner, b.owner, <size_t> npart * sizeof(int))
    b.wsizes = b.ints(nm)
    memcpy(b.wsizes, b.sizes, <size_t> nm * sizeof(int))
    b.hold = b.zeros(<Py_ssize_t> nt * nm)
    b.most = b.zeros(nt)
    b.n_most = b.zeros(nt)
    b.least = b.zeros(nt)
    b.n_least = b.zeros(nt)
    b.n_full = b.zeros(nt)
    b.unb = <char *> b.take(nt)
    memset(b.unb, 0, nt)
    for i in range(b.n_mov):
        t = b.mov_topics[i]
        for p in range(b.starts[t], b.starts[t + 1]):
            b.hold[<Py_ssize_t> t * nm + b.wowner[p]] += 1
        high, n_high = -1, 0
        for m in range(nm):
            if b.hold[<Py_ssize_t> t * nm + m]:
                size = b.wsizes[m]
                if size > high:
                    high, n_high = size, 1
                elif size == high:
                    n_high += 1
        b.most[t], b.n_most[t] = high, n_high
        low, n_low = b.wsizes[b.subs[b.sub_at[t]]], 0
        for j in range(b.sub_at[t], b.sub_at[t + 1]):
            size = b.wsizes[b.subs[j]]
            if size < low:
                low, n_low = size, 1
            elif size == low:
                n_low += 1
        b.least[t], b.n_least[t] = low, n_low
    for m in range(nm):
        if b.wsizes[m] == b.maxs[m]:
            for i in range(b.mo_at[m], b.mo_at[m + 1]):
                b.n_full[b.mo[i]] += 1
    b.n_unb = 0
    for i in range(b.n_mov):
        t = b.mov_topics[i]
        if b.breaks(t):
            b.unb[t] = 1
            b.n_unb += 1
    top = 0
    for m in range(nm):
        if b.wsizes[m] > top:
            top = b.wsizes[m]
    b.at_size = b.zeros(top + 2)
    for m in range(nm):
        b.at_size[b.wsizes[m]] += 1
    b.changed = b.ints(8 * nt + 8)  # 1 + 2 per movable topic held + 6 per movable topic of the two members
    b.stamp = b.ints(npart)
    for p in range(npart):
        b.stamp[p] = -1
    b.moved = b.ints(npart)
    b.n_moved = 0
    b.rec = b.lls(npart)
    b.seqs = b.lls(npart)
    b.spread = b.lls(npart)
    for t in range(nt):
        for p in range(b.starts[t], b.starts[t + 1]):
            b.rec[p] = -1
            before = (31 * (31 + p - b.starts[t]) + b.thash[t]) & 0xFFFFFFFFLL
            b.spread[p] = before ^ (before >> 16)
    b.set_t = b.ints(npart + 1)
    b.set_pair = b.lls(npart + 1)
    b.set_cap = b.ints(npart + 1)
    b.set_n = b.ints(npart + 1)
    b.nsets = 0
    b.seq = 0
    b.runs = b.ints(4 * npart + 4)  # runs (3 per partition at most), then `order_key`'s live sets
    b.with_prev = b.ints(npart)
    b.state = b.lls(5 * npart + 8)  # 4 per set and 1 per recorded partition

    # `GeneralAssignmentBuilder._balance`'s passes and the revert rule
    scratch = b.ints(nm)
    before = _balance_score(b.sizes, active, n_active, scratch)
    if not revocation_required:
        n = 0
        for i in range(n_un):
            if b.mov[b.ptopic[unassigned[i]]]:
                unassigned[n] = unassigned[i]
                n += 1
        if b.perform(unassigned, n) == THROWN:
            return _result(b, b.wowner, 0, leader)
    r = b.perform(movable_all, n_ma)
    if r == THROWN:
        return _result(b, b.wowner, 0, leader)
    performed = r == 1
    if initializing or not performed or _balance_score(b.wsizes, active, n_active, scratch) < before:
        return _result(b, b.wowner, 1, leader)
    return _result(b, b.owner, 0, leader)
