/* memory_prefetch.c — the lookups of a batch of commands, overlapped.
 *
 * Step 6 (main-io layer). Owns: the batch (clients, the cmdq window of
 * each, their keys and one resumable find per key), the round-robin walk
 * over those finds, and the statistics INFO prints.
 * Threads: MAIN THREAD ONLY. It reads the clients' parsed commands and the
 * keyspace; a client it batches from an I/O thread's result is one whose
 * read is COMPLETED (acquire), so the worker is done with it.
 * Valkey: the functions memory_prefetch.h names.
 *
 * WHY
 *
 * Once the I/O threads parse and write, the main thread mostly looks keys
 * up, and a lookup in a table of millions of keys is a chain of dependent
 * cache misses: the bucket, then the entry it points to, then the value,
 * then the value's bytes. One lookup cannot overlap its own misses, since
 * each address comes out of the previous load. Sixteen lookups can: walk
 * them in turns, one step of each per turn, and each step issues a
 * prefetch for the next address of its own chain and moves on, so that by
 * the time the walk comes back to it the line has arrived. Sixteen misses
 * are then in flight at once instead of one.
 *
 * THE BATCH
 *
 * Up to prefetch-batch-max-size clients and as many keys (0 turns it
 * off). It is filled in two places, from the commands already parsed:
 *
 *   - with I/O threads, from the results taken from the outbox
 *     (memory_prefetch_results): every completed read's client, and the
 *     keys of its queued commands, until the batch is full. Then the
 *     caller runs those clients one by one, in the order their results
 *     came, exactly as it would without the batch;
 *   - with or without I/O threads, from one client's pipeline
 *     (memory_prefetch_pipeline, from run_queued_commands): its next
 *     commands' keys, a window at a time.
 *
 * THE PHASES (Valkey's prefetchCommands)
 *
 *   1. the argument objects argv[1..] of every batched command;
 *   2. the bytes of those whose bytes have their own allocation (most
 *      strings keep theirs inside the object: obj_bytes_inline);
 *   3. the keys' finds, stepped round robin: bucket, entry, then the
 *      entry's value object and the value's bytes. A key that repeats
 *      the one before it is walked once, and the phase is skipped when a
 *      single key is left: a lone chain has nothing to overlap with.
 *
 * A step of a find uses what its previous step prefetched and prefetches
 * the next line; a find is never restarted, each resumes where it
 * stopped. The walk's cursor goes to the next unfinished key after every
 * step that issued a prefetch, and starts at 0 for each batch.
 *
 * ONLY A HINT
 *
 * The walk's results are thrown away. The commands run afterwards and do
 * their own lookups, which now hit the cache; so a command that runs
 * later in the batch sees the writes of the ones before it, and a key an
 * earlier command deleted, added or moved (a write may take a rehash
 * step) is looked up as it is then. Nothing here changes the table: a
 * find never rehashes, and nothing runs between the finds' first and last
 * steps, which is the resumable find's one condition. Expiry is left to
 * the lookup too. A batch keeps no pointer past its walk except those it
 * compares, never dereferences (a client's address and id).
 *
 * WHERE SOLOIST DIFFERS
 *
 * A Valkey key lives in its value object; a soloist key lives in a
 * db_entry beside a pointer to the value (db.h), so the walk has one more
 * hop (entry -> value -> bytes). Valkey 9 prefetches one client's pipeline
 * in a separate function (prefetchCommandQueueKeys, in networking.c);
 * here both batches share this file's walk.
 */
#include "memory_prefetch.h"
#include "memory_prefetch_test.h"

#include <stdatomic.h>
#include <string.h>

#include "commands.h"
#include "db.h"
#include "hashtable.h"
#include "hashtable_prefetch.h"
#include "server.h"

enum key_state { KEY_FIND, KEY_VALUE, KEY_BYTES, KEY_DONE };

/* One walk: the finds of up to PREFETCH_BATCH_LIMIT keys. */
typedef struct walk {
    int count, cur; /* keys [0, count); the key the walk steps next */
    hashtable *ht[PREFETCH_BATCH_LIMIT];
    hashtable_key name[PREFETCH_BATCH_LIMIT]; /* what each find looks up */
    hashtable_incremental_find_state find[PREFETCH_BATCH_LIMIT];
    uint8_t state[PREFETCH_BATCH_LIMIT];
    db_entry *found[PREFETCH_BATCH_LIMIT];
    /* What the walk did, for the tests (walk_step keeps it; walk_begin
     * clears it): find steps per key and in all, and the first
     * PREFETCH_BATCH_LIMIT keys visited, in order. */
    int steps[PREFETCH_BATCH_LIMIT], total, visits;
    int trace[PREFETCH_BATCH_LIMIT];
} walk;

/* A batch: the clients, the window of each one's cmdq it covers, and the
 * walk over their keys. */
typedef struct batch {
    int max, clients;
    client *client[PREFETCH_BATCH_LIMIT];
    uint64_t id[PREFETCH_BATCH_LIMIT];
    int first[PREFETCH_BATCH_LIMIT], end[PREFETCH_BATCH_LIMIT];
    obj *key[PREFETCH_BATCH_LIMIT];
    walk w;
} batch;

/* Two batches, so that a pipeline's window taken while a results batch is
 * being run does not wipe the results batch's later clients. */
static batch results_batch, pipeline_batch;
static batch *last_run = &results_batch;
static memory_prefetch_stats stats;

/* ------------------------------------------------------------ the walk */

static void walk_begin(walk *w) {
    w->total = w->visits = 0;
    for (int i = 0; i < w->count; i++) {
        w->steps[i] = 0;
        w->found[i] = NULL;
    }
}

/* One step of key i: KEY_FIND steps its find (one prefetch, or the end
 * of the find); KEY_VALUE prefetches the value object of the entry found;
 * KEY_BYTES the value's bytes, when they are not inside the object.
 * Returns 1 when it issued a prefetch (the walk should move on to another
 * key while the line arrives), 0 when key i can go on at once. */
/*@ prefetch-step */
static int walk_step(walk *w, int i) {
    if (w->visits < PREFETCH_BATCH_LIMIT) w->trace[w->visits] = i;
    w->visits++;
    switch (w->state[i]) {
    case KEY_FIND: {
        w->steps[i]++, w->total++;
        if (hashtable_incremental_find_step(&w->find[i])) return 1;
        void *e;
        w->state[i] = hashtable_incremental_find_get_result(&w->find[i], &e) ? KEY_VALUE : KEY_DONE;
        w->found[i] = w->state[i] == KEY_VALUE ? e : NULL;
        return 0;
    }
    case KEY_VALUE: /* the entry is in cache (its key was just compared) */
        PREFETCH(w->found[i]->val);
        w->state[i] = KEY_BYTES;
        return 1;
    case KEY_BYTES: {
        obj *v = w->found[i]->val;
        if (v->type == OBJ_STRING && !obj_bytes_inline(v)) PREFETCH(v->ptr);
        w->state[i] = KEY_DONE;
        return 0;
    }
    default: return 0;
    }
}
/*@ end */

/* Contract: the first key that is not KEY_DONE, looking from w->cur on
 * and wrapping around past the last key (count) to key 0, so each key
 * gets its turn; -1 when every key is done. Changes nothing.
 * Valkey: getNextPrefetchInfo. */
/*@ prefetch-next */
static int walk_next(const walk *w) {
    /*@ exercise: walk-next */
    for (int n = 0; n < w->count; n++) {
        int i = (w->cur + n) % w->count;
        if (w->state[i] != KEY_DONE) return i;
    }
    return -1;
    /*@ end */
}
/*@ end */

/* A step of the walk is one walk_step call: one visit of one key, which
 * steps its find once, or prefetches its value object, or its value's
 * bytes. A key takes one find step per bucket its find visits, one per
 * candidate entry and one to end, then two more when found: a handful.
 * A walk gives up after WALK_STEPS_PER_KEY times its keys steps, so that
 * a pathological chain can never stall a batch: what is left
 * unprefetched is only slower, never wrong. */
#define WALK_STEPS_PER_KEY 64

/* Contract: every key of the walk, [0, count) and no other, gets its
 * find initialised (hashtable_incremental_find_init of name[i] in ht[i])
 * and state KEY_FIND, and the cursor starts at key 0. Then, until
 * walk_next finds nothing left or count * WALK_STEPS_PER_KEY steps
 * (walk_step calls, every one counted, whether it prefetched or not, a
 * find's step or a found key's value or bytes) were taken, take one
 * walk_step of the key walk_next gives; when that step issued a prefetch
 * (returned 1), put the cursor on the key after it, so that the next
 * step goes to another key while the line arrives; otherwise leave the
 * cursor on it. A find is never initialised twice: each resumes where it
 * stopped. Valkey: hashtablePrefetch. */
/*@ prefetch-walk */
static void walk_run(walk *w) {
    /*@ exercise: walk-run */
    w->cur = 0;
    for (int i = 0; i < w->count; i++) {
        hashtable_incremental_find_init(&w->find[i], w->ht[i], &w->name[i]);
        w->state[i] = KEY_FIND;
    }
    int i, budget = w->count * WALK_STEPS_PER_KEY;
    while ((i = walk_next(w)) >= 0 && budget-- > 0) {
        w->cur = i;
        if (walk_step(w, i)) w->cur = (i + 1) % w->count;
    }
    /*@ end */
}
/*@ end */

/* ----------------------------------------------------------- the batch */

static void batch_reset(batch *b) {
    b->max = server.prefetch_batch_max_size;
    if (b->max > PREFETCH_BATCH_LIMIT) b->max = PREFETCH_BATCH_LIMIT;
    b->clients = 0;
    b->w.count = 0;
}

static int full(const batch *b) { return b->clients == b->max || b->w.count == b->max; }

/* The keys of one parsed command (Valkey's legacy positions: first_key,
 * last_key, key_step), added while the batch has room. A command that is
 * unknown or has the wrong arity adds none: it will fail before any
 * lookup. */
/*@ prefetch-batch-add */
static void add_command_keys(batch *b, client *c, const parsed_cmd *pc) {
    if (pc->argc < 1 || pc->argv == NULL) return;
    const command *cmd = pc->cmd ? pc->cmd : commands_lookup(pc->argv[0]->ptr, pc->argv[0]->len);
    if (cmd == NULL || cmd->first_key <= 0) return;
    if (cmd->arity > 0 ? pc->argc != cmd->arity : pc->argc < -cmd->arity) return;
    int last = cmd->last_key < 0 ? pc->argc + cmd->last_key : cmd->last_key;
    int step = cmd->key_step > 0 ? cmd->key_step : 1;
    for (int j = cmd->first_key; j <= last && j < pc->argc && b->w.count < b->max; j += step) {
        int k = b->w.count++;
        b->key[k] = pc->argv[j];
        b->w.ht[k] = c->db->keys;
    }
}

static int batch_add_client(batch *b, client *c) {
    if (b->max == 0 || full(b)) return 0;
    int i = b->clients++;
    b->client[i] = c;
    b->id[i] = c->id;
    b->first[i] = c->cmdq_pos;
    int q = c->cmdq_pos;
    while (q < c->cmdq_len && b->w.count < b->max) add_command_keys(b, c, &c->cmdq[q++]);
    b->end[i] = q;
    return 1;
}
/*@ end */

/* The walk's keys from the batch's: each key's name, less a key that
 * repeats the one just before it in the same table. Its find would walk
 * the chain the one before brings in, with nothing to overlap: a
 * pipeline of INCRs on one counter, or redis-benchmark's MSET, whose ten
 * keys are one name, would hash every key twice (the walk, then the
 * command) for lines already in cache. Only the key before is compared:
 * one comparison, no search, and its bytes are the ones the find would
 * hash next, which the phases before prefetched. */
static void walk_keys_once(walk *w, obj *const *key) {
    int n = 0;
    for (int k = 0; k < w->count; k++) {
        hashtable_key name = {key[k]->ptr, key[k]->len};
        if (n > 0 && w->ht[n - 1] == w->ht[k] && hashtable_key_compare(&w->name[n - 1], &name) == 0) continue;
        w->ht[n] = w->ht[k];
        w->name[n++] = name;
    }
    w->count = n;
}

/* Valkey: prefetchCommands. */
/*@ prefetch-phases */
static void batch_run(batch *b) {
    last_run = b;
    for (int i = 0; i < b->clients; i++) /* 1: the argument objects */
        for (int q = b->first[i]; q < b->end[i]; q++)
            for (int j = 1; j < b->client[i]->cmdq[q].argc; j++) PREFETCH(b->client[i]->cmdq[q].argv[j]);
    for (int i = 0; i < b->clients; i++) /* 2: their bytes, when not inside the object */
        for (int q = b->first[i]; q < b->end[i]; q++)
            for (int j = 1; j < b->client[i]->cmdq[q].argc; j++) {
                const obj *a = b->client[i]->cmdq[q].argv[j];
                if (!obj_bytes_inline(a)) PREFETCH(a->ptr);
            }
    walk_keys_once(&b->w, b->key);
    walk_begin(&b->w);
    if (b->w.count < 2) return; /* 3: the finds, when there is something to overlap */
    walk_run(&b->w);
    stats.batches++;
    stats.keys += (uint64_t)b->w.count;
}
/*@ end */

/* ------------------------------------------------------- the two users */

/*@ prefetch-results */
size_t memory_prefetch_results(const job_word *r, size_t n) {
    batch *b = &results_batch;
    batch_reset(b);
    if (b->max == 0) return n;
    size_t i;
    for (i = 0; i < n; i++) {
        if (job_type(r[i]) != JOB_RES_READ_CLIENT) continue; /* a write's result: nothing to look up */
        client *c = job_ptr(r[i]);
        if (atomic_load_explicit(&c->io_read_state, memory_order_acquire) != CLIENT_IO_COMPLETED) continue;
        if (c->io_accepting || c->io_nread <= 0 || (c->flags & CLIENT_CLOSE_ASAP)) continue;
        if (c->cmdq_pos == c->cmdq_len) continue;
        if (!batch_add_client(b, c)) break;
    }
    if (i == 0) i = 1; /* cannot happen (an empty batch takes anyone); progress regardless */
    batch_run(b);
    return i;
}
/*@ end */

/*@ prefetch-pipeline */
int memory_prefetch_pipeline(client *c) {
    batch *b = &results_batch;
    for (int i = 0; i < b->clients; i++) {
        if (b->client[i] == c && b->id[i] == c->id && b->first[i] == c->cmdq_pos && b->end[i] <= c->cmdq_len) {
            b->client[i] = NULL; /* used once: a later run of c's queue takes its own window */
            return b->end[i];
        }
    }
    b = &pipeline_batch;
    batch_reset(b);
    /* A lone command has no lookups to overlap with. */
    if (b->max == 0 || c->cmdq_len - c->cmdq_pos < 2) return c->cmdq_len;
    batch_add_client(b, c);
    batch_run(b);
    return b->end[0];
}
/*@ end */

void memory_prefetch_get_stats(memory_prefetch_stats *out) { *out = stats; }

/* ------------------------------------------------------------- tests */

void memory_prefetch_reset(void) { batch_reset(&pipeline_batch); }
int memory_prefetch_add_client(client *c) { return batch_add_client(&pipeline_batch, c); }
void memory_prefetch_run(void) { batch_run(&pipeline_batch); }

void memory_prefetch_get_probe(memory_prefetch_probe *out) {
    const batch *b = last_run;
    memset(out, 0, sizeof(*out));
    out->clients = b->clients;
    out->keys = b->w.count;
    out->cursor = b->w.cur;
    out->visits = b->w.visits;
    for (int v = 0; v < b->w.visits && v < PREFETCH_BATCH_LIMIT; v++) out->trace[v] = b->w.trace[v];
    for (int i = 0; i < b->clients; i++) out->end[i] = b->end[i];
    for (int k = 0; k < b->w.count; k++) {
        out->steps[k] = b->w.steps[k];
        out->found[k] = b->w.found[k];
    }
}

int memory_prefetch_walk_keys(struct db *d, obj **keys, int n, int *steps, void **found) {
    static walk w;
    w.count = n;
    for (int k = 0; k < n; k++) {
        w.ht[k] = d->keys;
        w.name[k] = (hashtable_key){keys[k]->ptr, keys[k]->len};
    }
    walk_begin(&w);
    walk_run(&w);
    for (int k = 0; k < n; k++) {
        steps[k] = w.steps[k];
        found[k] = w.found[k];
    }
    return w.total;
}
