# cython: language_level=3, boundscheck=False, wraparound=False
"""`assignors.optimality._solve` in C: the same steps over the same tables, in native integers.

The Python functions stay the specification and the pure fallback: each C function here mirrors the one of the
same name (`_solve`, `_max_kept`, `_completes`, `_fills`, `_kept_by_prices`, `_dual_value`) and gives the same
result. The min-cost flow (`_kept_by_flow`: more topic groups than the price descent takes, which the rounds of
small groups seldom have) stays in Python: `min_moves` returns -1 for it, and for tables the Python functions would
reject.
"""

from libc.stdlib cimport free, malloc


cdef struct Tables:
    long long num_members
    long long num_groups
    long long *load
    long long *size
    long long *keep  # keepable partitions per ``group * members + member``
    long long *start  # group g's members are member[start[g]:start[g + 1]]
    long long *member


cdef inline long long _least(long long a, long long b) noexcept nogil:
    return a if a < b else b


def min_moves(list load, list members_of, list size, list keep, long long total_owned, long long moved,
              long long few_groups):
    """`_solve` of these tables (`few_groups`: `_FEW_GROUPS`), or -1 where Python answers: the flow's case, and
    tables it would reject (a member index out of range, a keep table of another length, a member with a load
    and no group)."""
    cdef Py_ssize_t num_members = len(load), num_groups = len(size), arcs = 0, g, i
    cdef long long m
    cdef list row
    if len(members_of) != num_groups or len(keep) != num_groups * num_members:
        return -1
    for g in range(num_groups):
        arcs += len(<list>members_of[g])
    # one block for the tables and every step's scratch (the most `_max_kept` and its callees take at once)
    cdef Py_ssize_t subsets = (1 << num_groups) if num_groups <= few_groups else 0
    cdef Py_ssize_t words = (num_members + 2 * num_groups + num_groups * num_members + 1 + arcs
                             + 2 * num_members + 3 * num_groups + 4 * num_members + 4 * num_groups + 2 + 3 * arcs
                             + subsets)
    cdef long long *block = <long long *>malloc(words * sizeof(long long))
    if block == NULL:
        raise MemoryError()
    cdef Tables t
    cdef long long result = -1
    try:
        t.num_members, t.num_groups = num_members, num_groups
        t.load = block
        t.size = t.load + num_members
        t.keep = t.size + num_groups
        t.start = t.keep + num_groups * num_members
        t.member = t.start + num_groups + 1
        for i in range(num_members):
            t.load[i] = load[i]
        for g in range(num_groups):
            t.size[g] = size[g]
        for i in range(num_groups * num_members):
            t.keep[i] = keep[i]
        arcs = 0
        for g in range(num_groups):
            t.start[g] = arcs
            row = members_of[g]
            for i in range(len(row)):
                m = row[i]
                if m < 0 or m >= num_members:
                    return -1
                t.member[arcs] = m
                arcs += 1
        t.start[num_groups] = arcs
        result = _solve(&t, total_owned, moved, few_groups, t.member + arcs)
    finally:
        free(block)
    return result


cdef long long _solve(Tables *t, long long total_owned, long long moved, long long few_groups,
                      long long *scratch) noexcept nogil:
    cdef long long num_members = t.num_members, keepable_total = 0, bound = 0, kept, g, m
    cdef long long *keepable = scratch
    cdef long long *row
    for m in range(num_members):
        keepable[m] = 0
    for g in range(t.num_groups):
        row = t.keep + g * num_members
        for m in range(num_members):
            if row[m]:
                keepable[m] += row[m]
                keepable_total += row[m]
    if not keepable_total:
        return total_owned
    for m in range(num_members):
        bound += _least(keepable[m], t.load[m])
    if total_owned - bound == moved:
        return moved
    if t.num_groups == 1:
        return total_owned - bound
    kept = _max_kept(t, few_groups, scratch)
    return -1 if kept < 0 else total_owned - kept


cdef long long _max_kept(Tables *t, long long few_groups, long long *scratch) noexcept nogil:
    """The greedy start flow on keep arcs, then `_completes`, `_fills` or `_kept_by_prices`; -1: the flow."""
    cdef long long num_members = t.num_members, num_groups = t.num_groups, kept = 0, owned, amount, g, i, k, m
    cdef long long *left = scratch
    cdef long long *room = left + num_members
    cdef long long *left_copy = room + num_groups
    cdef long long *room_copy = left_copy + num_members
    cdef long long *order = room_copy + num_groups
    for m in range(num_members):
        left[m] = t.load[m]
    for g in range(num_groups):
        room[g] = t.size[g]
    for g in range(num_groups):  # stable insertion sort by how many members may hold the group
        i = g
        while i and t.start[order[i - 1] + 1] - t.start[order[i - 1]] > t.start[g + 1] - t.start[g]:
            order[i] = order[i - 1]
            i -= 1
        order[i] = g
    for i in range(num_groups):
        g = order[i]
        for k in range(t.start[g], t.start[g + 1]):
            m = t.member[k]
            owned = t.keep[g * num_members + m] if t.load[m] else 0
            if owned:
                amount = _least(_least(owned, left[m]), room[g])
                left[m] -= amount
                room[g] -= amount
                kept += amount
    for m in range(num_members):
        left_copy[m] = left[m]
    for g in range(num_groups):
        room_copy[g] = room[g]
    if _completes(t, order, left_copy, room_copy) or (
            num_groups <= few_groups and _fills(t, left, room, order + num_groups)):
        return kept
    if num_groups <= few_groups:
        return _kept_by_prices(t, order + num_groups)
    return -1


cdef bint _completes(Tables *t, long long *order, long long *left, long long *room) noexcept nogil:
    cdef long long amount, g, i, k, m
    for i in range(t.num_groups):
        g = order[i]
        for k in range(t.start[g], t.start[g + 1]):
            m = t.member[k]
            if left[m] and room[g]:
                amount = _least(left[m], room[g])
                left[m] -= amount
                room[g] -= amount
    for m in range(t.num_members):
        if left[m]:
            return False
    return True


cdef bint _fills(Tables *t, long long *left, long long *room, long long *scratch) noexcept nogil:
    cdef long long num_groups = t.num_groups, groups, held, wanted, have, g, k, m
    cdef long long *may_hold = scratch  # per member, its groups as bits
    cdef long long *need = may_hold + t.num_members  # loads left, by the set of groups their members may hold
    for m in range(t.num_members):
        may_hold[m] = 0
    for g in range(num_groups):
        for k in range(t.start[g], t.start[g + 1]):
            may_hold[t.member[k]] |= 1LL << g
    for groups in range(1LL << num_groups):
        need[groups] = 0
    for m in range(t.num_members):
        if left[m]:
            need[may_hold[m]] += left[m]
    for groups in range(1, 1LL << num_groups):
        wanted = have = 0
        for held in range(1, groups + 1):
            if held & groups == held:
                wanted += need[held]
        for g in range(num_groups):
            if groups >> g & 1:
                have += room[g]
        if wanted > have:
            return False
    return True


cdef long long _kept_by_prices(Tables *t, long long *scratch) noexcept nogil:
    """The steepest descent over group prices, taking the same first best neighbour at each step; without the
    Python version's memo of the values seen (here a value costs less than looking it up)."""
    cdef long long num_members = t.num_members, num_groups = t.num_groups, num_active = 0
    cdef long long fixed = 0, owned, n, best, step_value, value, groups, sign, g, k, m
    cdef bint stepped, feasible
    cdef long long *room = scratch
    cdef long long *price = room + num_groups
    cdef long long *trial = price + num_groups
    cdef long long *step = trial + num_groups
    cdef long long *allowed_start = step + num_groups  # per member, the groups it may hold (`allowed_of`)
    cdef long long *allowed = allowed_start + num_members + 1
    cdef long long *active = allowed + t.start[num_groups]
    cdef long long *kept_start = active + num_members  # per active member, (group, owned count) pairs
    cdef long long *kept = kept_start + num_members + 1
    for m in range(num_members + 1):
        allowed_start[m] = 0
    for k in range(t.start[num_groups]):
        allowed_start[t.member[k] + 1] += 1
    for m in range(num_members):
        allowed_start[m + 1] += allowed_start[m]
    for g in range(num_groups):  # each member's groups in group order, as `allowed_of` lists them
        for k in range(t.start[g], t.start[g + 1]):
            m = t.member[k]
            allowed[allowed_start[m]] = g
            allowed_start[m] += 1
    for m in range(num_members, 0, -1):
        allowed_start[m] = allowed_start[m - 1]
    allowed_start[0] = 0
    for g in range(num_groups):
        room[g] = t.size[g]
    kept_start[0] = 0
    for m in range(num_members):
        n = t.load[m]
        if not n:
            continue
        if allowed_start[m + 1] == allowed_start[m]:
            return -1  # the Python version fails on it
        if allowed_start[m + 1] - allowed_start[m] == 1:
            g = allowed[allowed_start[m]]
            fixed += _least(t.keep[g * num_members + m], n)
            room[g] -= n
            continue
        k = kept_start[num_active]
        active[num_active] = m
        for g in allowed[allowed_start[m]:allowed_start[m + 1]]:
            owned = t.keep[g * num_members + m]
            if owned:
                kept[k] = g
                kept[k + 1] = owned
                k += 2
        num_active += 1
        kept_start[num_active] = k
    for g in range(num_groups):
        price[g] = 0
    best = fixed + _dual_value(t, price, room, allowed_start, allowed, active, num_active, kept_start, kept)
    while True:
        stepped = False
        step_value = best
        for groups in range(1, 1LL << num_groups):
            for sign in range(1, -2, -2):
                feasible = True
                for g in range(num_groups):
                    trial[g] = price[g] + sign if groups >> g & 1 else price[g]
                    if trial[g] < 0:
                        feasible = False
                if not feasible:
                    continue
                value = fixed + _dual_value(t, trial, room, allowed_start, allowed, active, num_active, kept_start,
                                            kept)
                if value < step_value:
                    stepped, step_value = True, value
                    for g in range(num_groups):
                        step[g] = trial[g]
        if not stepped:
            return best
        for g in range(num_groups):
            price[g] = step[g]
        best = step_value


cdef long long _dual_value(Tables *t, long long *price, long long *room, long long *allowed_start,
                           long long *allowed, long long *active, long long num_active, long long *kept_start,
                           long long *kept) noexcept nogil:
    cdef long long total = 0, least, u, n, value, short, slope, g, i, k, m
    for g in range(t.num_groups):
        total += room[g] * price[g]
    for i in range(num_active):
        m = active[i]
        least = price[allowed[allowed_start[m]]]
        for k in range(allowed_start[m], allowed_start[m + 1]):
            if price[allowed[k]] < least:
                least = price[allowed[k]]
        u = -least
        n = t.load[m]
        value = n * u
        for k in range(kept_start[i], kept_start[i + 1], 2):
            short = 1 - u - price[kept[k]]
            if short > 0:
                value += kept[k + 1] * short
        while u < 1:
            slope = n
            for k in range(kept_start[i], kept_start[i + 1], 2):
                if price[kept[k]] <= -u:
                    slope -= kept[k + 1]
            if slope >= 0:
                break
            value += slope
            u += 1
        total += value
    return total
