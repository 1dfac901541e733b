/* test_blocked.c — blocked.c's deadline heap (blocked_timers_*).
 *
 * The heap must give back the owners whose deadline is before now, the
 * earliest first and, for equal deadlines, the lowest id first; it must
 * keep every owner's slot pointing at the owner's entry through every
 * move, so that removing an entry by its slot (a client served or killed
 * before its deadline) takes out that entry and no other. Checked on
 * small hand-made cases and on a random sequence of adds and removals
 * against a plain array.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "blocked.h"

typedef struct owner {
    long long deadline;
    uint64_t id;
    size_t slot;
    int in;
} owner;

static void add(blocked_timers *t, owner *o) {
    blocked_timers_add(t, o->deadline, o->id, o, &o->slot);
    o->in = 1;
}

/* Every entry's slot points back at it, and the heap order holds. */
static void check_heap(const blocked_timers *t) {
    for (size_t i = 0; i < t->len; i++) {
        assert_int_equal(*t->v[i].slot, i);
        if (i == 0) continue;
        const blocked_timer *p = &t->v[(i - 1) / 2], *c = &t->v[i];
        assert_true(p->deadline < c->deadline || (p->deadline == c->deadline && p->id < c->id));
    }
}

static void test_empty(void **state) {
    (void)state;
    blocked_timers t = {0};
    assert_int_equal(blocked_timers_next(&t), -1);
    assert_null(blocked_timers_pop_expired(&t, 1000));
    blocked_timers_free(&t);
}

static void test_order_and_ties(void **state) {
    (void)state;
    blocked_timers t = {0};
    owner o[] = {{300, 1, 0, 0}, {100, 9, 0, 0}, {100, 2, 0, 0}, {200, 5, 0, 0}, {100, 4, 0, 0}};
    for (size_t i = 0; i < 5; i++) add(&t, &o[i]);
    check_heap(&t);
    assert_int_equal(blocked_timers_next(&t), 100);
    /* Due means strictly before now: at 100 nothing is due yet. */
    assert_null(blocked_timers_pop_expired(&t, 100));
    assert_ptr_equal(blocked_timers_pop_expired(&t, 101), &o[2]); /* 100, id 2 */
    assert_ptr_equal(blocked_timers_pop_expired(&t, 101), &o[4]); /* 100, id 4 */
    assert_ptr_equal(blocked_timers_pop_expired(&t, 101), &o[1]); /* 100, id 9 */
    assert_null(blocked_timers_pop_expired(&t, 101));
    assert_int_equal(o[2].slot, BLOCKED_NO_SLOT);
    assert_ptr_equal(blocked_timers_pop_expired(&t, 1000), &o[3]);
    assert_ptr_equal(blocked_timers_pop_expired(&t, 1000), &o[0]);
    assert_int_equal(t.len, 0);
    blocked_timers_free(&t);
}

static void test_remove_by_slot(void **state) {
    (void)state;
    blocked_timers t = {0};
    owner o[8];
    for (int i = 0; i < 8; i++) {
        o[i] = (owner){.deadline = 10 * (8 - i), .id = (uint64_t)i};
        add(&t, &o[i]);
    }
    /* The top, a leaf and one in the middle. */
    blocked_timers_remove(&t, o[7].slot);
    assert_int_equal(o[7].slot, BLOCKED_NO_SLOT);
    check_heap(&t);
    blocked_timers_remove(&t, o[0].slot);
    check_heap(&t);
    blocked_timers_remove(&t, o[3].slot);
    check_heap(&t);
    assert_int_equal(t.len, 5);
    int expect[] = {6, 5, 4, 2, 1};
    for (int i = 0; i < 5; i++) assert_ptr_equal(blocked_timers_pop_expired(&t, 1000), &o[expect[i]]);
    assert_int_equal(blocked_timers_next(&t), -1);
    blocked_timers_free(&t);
}

/* The earliest (deadline, id) among the owners still in, or NULL. */
static owner *model_min(owner *o, int n) {
    owner *best = NULL;
    for (int i = 0; i < n; i++)
        if (o[i].in &&
            (!best || o[i].deadline < best->deadline || (o[i].deadline == best->deadline && o[i].id < best->id)))
            best = &o[i];
    return best;
}

static void test_random_against_model(void **state) {
    (void)state;
    enum { N = 2000 };
    owner *o = calloc(N, sizeof(*o));
    blocked_timers t = {0};
    srand(12345);
    for (int step = 0; step < 20000; step++) {
        int i = rand() % N;
        if (!o[i].in && rand() % 3) {
            o[i].deadline = rand() % 500; /* many equal deadlines */
            o[i].id = (uint64_t)i;
            add(&t, &o[i]);
        } else if (o[i].in) {
            blocked_timers_remove(&t, o[i].slot);
            o[i].in = 0;
        }
        if (step % 97 == 0) {
            check_heap(&t);
            owner *m = model_min(o, N);
            assert_int_equal(blocked_timers_next(&t), m ? m->deadline : -1);
        }
    }
    for (owner *m; (m = model_min(o, N));) {
        assert_ptr_equal(blocked_timers_pop_expired(&t, m->deadline + 1), m);
        m->in = 0;
    }
    assert_int_equal(t.len, 0);
    blocked_timers_free(&t);
    free(o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_order_and_ties),
        cmocka_unit_test(test_remove_by_slot),
        cmocka_unit_test(test_random_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
