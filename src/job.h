/* job.h — what the main thread and the I/O threads may say to each other.
 *
 * Step 1 (threads layer). Owns: the job vocabulary (the request and result
 * enums) and the one-word encoding every queue of steps 2-5 carries. Any
 * thread may use it: it is types and pure inline functions, no state.
 * Valkey: src/io_threads.h (JobRequest, JobResult, JOB_TAG_MASK) and the
 * tag/untag helpers in src/io_threads.c, as of the pinned commit, where one
 * request enum serves both inboxes.
 *
 * WHAT MAY MOVE TO A WORKER
 *
 * soloist is Valkey's bet made small: one thread, the main thread (thread
 * 0), owns every piece of state a command can observe, and other threads
 * only take over the work *around* a command that touches no such state.
 * The list of jobs below is that bet written down. A worker may
 *
 *   - read a client's socket into its query buffer and parse the RESP in
 *     it (READ_CLIENT); the command table is read-only once the server
 *     runs, so a worker may also look the command's name up in it;
 *   - write a client's pending replies to its socket, up to a mark main
 *     set before handing the client over (WRITE_CLIENT);
 *   - free memory nobody else can reach any more: an argument vector,
 *     freed on the thread that allocated it (FREE_ARGV), or a value main
 *     has already unlinked from the keyspace (FREE_OBJ);
 *   - finish a connection's handshake once accept() returned it (ACCEPT;
 *     TLS in Valkey);
 *   - sit in epoll_wait for the main thread (POLL): the event loop's one
 *     call that only waits.
 *
 * And never: look at the keyspace (a hashtable is not safe to read while
 * main writes it, and a command's result depends on every earlier
 * command); run a command; touch main's statistics or a configuration
 * value (plain fields main reads and writes without locks; a worker's
 * own job counts are atomics only it writes); or free a client
 * (that unlinks it from lists main walks). A client belongs to one thread
 * at a time, and a job hands it over: from the moment main enqueues a
 * READ_CLIENT or WRITE_CLIENT until main dequeues the matching result,
 * main does not touch the client, and afterwards the worker does not.
 * The layering check (tools/layers.py) keeps this file, the queues and
 * io_threads from even including the keyspace's headers or client.h:
 * both sit above the threads layer in the line.
 *
 * WHY ONE WORD
 *
 * A job is a pointer to the thing to work on (a client, an argv array, an
 * object, the event loop) with the job's type in its three low bits. The
 * allocator returns addresses that are multiples of 8 at least, so those
 * bits are always zero in the pointer and free to carry the type:
 *
 *        63                                        3 2   0
 *       +-------------------------------------------+-----+
 *       |      pointer bits 63..3 (bits 2..0 = 0)   | type|
 *       +-------------------------------------------+-----+
 *
 * One word is what makes the queues simple and cheap. A slot is one
 * machine word, so a store to it is a single-copy atomic operation: the
 * job and its publication are one store, and an empty slot can be told
 * from a full one by its value alone (0, which no job can be, because no
 * job's pointer is NULL). Eight jobs share a 64-byte cache line, so one
 * line moving from core to core carries up to eight of them (in the SPSC
 * and MPSC rings; queue_spmc.c says why the shared inbox gives each job a
 * line of its own). And the
 * worker learns what to do from a three-bit number that picks one of the
 * handlers registered before it started, never from a function pointer
 * carried in the job itself. (Valkey 8.0's queues carried a {handler, data}
 * pair per job, 16 bytes; the lock-free queues of Valkey 9.1 went to one
 * word.)
 *
 * The price is the two assumptions the asserts below check: at most 8
 * types per enum, and every job's pointer aligned to 8 bytes.
 */
#ifndef SOLOIST_JOB_H
#define SOLOIST_JOB_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

/* Main -> worker. The shared inbox (any worker may take the job) carries
 * READ_CLIENT, WRITE_CLIENT, FREE_OBJ and ACCEPT, and POLL while few
 * threads are active; a worker's private inbox carries FREE_ARGV (it must
 * reach the thread that allocated the argv) and POLL when many are.
 * Valkey's values. */
/*@ job-request */
typedef enum job_request {
    JOB_REQ_READ_CLIENT = 0,  /* payload: the client */
    JOB_REQ_WRITE_CLIENT = 1, /* payload: the client */
    JOB_REQ_FREE_ARGV = 2,    /* payload: the argv array (its objects with it) */
    JOB_REQ_FREE_OBJ = 3,     /* payload: the object, unlinked, its refcount taken to 0 by main */
    JOB_REQ_POLL = 4,         /* payload: the event loop */
    JOB_REQ_ACCEPT = 5,       /* payload: the new connection's client */
    JOB_REQ_COUNT
} job_request;

/* The routing above as bit sets, which io_threads checks on the way in
 * and on the way out: bit t is set when a request of type t may travel
 * through that inbox. */
#define JOB_SHARED_INBOX_TYPES                                                                                         \
    ((1u << JOB_REQ_READ_CLIENT) | (1u << JOB_REQ_WRITE_CLIENT) | (1u << JOB_REQ_FREE_OBJ) | (1u << JOB_REQ_ACCEPT) |  \
     (1u << JOB_REQ_POLL))
#define JOB_PRIVATE_INBOX_TYPES ((1u << JOB_REQ_FREE_ARGV) | (1u << JOB_REQ_POLL))
/*@ end */

/*@ job-result */
/* Worker -> main, through the shared outbox: the client is handed back
 * (an ACCEPT's completion comes back as a READ_CLIENT result, as in
 * Valkey). Jobs that hand nothing back (the frees, POLL) have no result:
 * POLL's completion is a flag the poll offload publishes itself. */
typedef enum job_result {
    JOB_RES_READ_CLIENT = 0,  /* payload: the client */
    JOB_RES_WRITE_CLIENT = 1, /* payload: the client */
    JOB_RES_COUNT
} job_result;
/*@ end */

/*@ job-budget */
#define JOB_TYPE_BITS 3
#define JOB_TYPE_MASK ((uintptr_t)((1u << JOB_TYPE_BITS) - 1)) /* 0x7 */

/* The type must fit in the bits alignment leaves free... */
static_assert(JOB_REQ_COUNT <= (1 << JOB_TYPE_BITS), "job_request must fit in JOB_TYPE_BITS bits");
static_assert(JOB_RES_COUNT <= (1 << JOB_TYPE_BITS), "job_result must fit in JOB_TYPE_BITS bits");
/* ...and alignment must leave them free. Every payload is a heap
 * allocation (zmalloc -> malloc), and malloc aligns for max_align_t.
 * A payload that is not its own allocation (a field inside a struct) would
 * need its own alignment checked; job_encode asserts it at run time. */
static_assert(_Alignof(max_align_t) >= (1 << JOB_TYPE_BITS), "malloc must align payloads to 8 bytes");
/* A pointer round-trips through uintptr_t, and the word is one slot. */
static_assert(sizeof(uintptr_t) == sizeof(void *), "a job is one pointer-sized word");
/*@ end */

/*@ job-word */
/* A job: a payload pointer and a type in one word. Never 0. */
typedef uintptr_t job_word;

/* The three functions below are the whole encoding, and their contract
 * is the picture above. job_encode packs ptr (non-NULL, its low
 * JOB_TYPE_BITS bits zero) and type (at most JOB_TYPE_MASK) into one
 * word; job_type and job_ptr give back exactly the type and the pointer
 * it packed, for every such pair: the type lives only in the low
 * JOB_TYPE_BITS bits, every other bit is the pointer's own, and neither
 * reading disturbs the other. A caller's mistake (a NULL or misaligned
 * pointer, a type that does not fit) stops the program in job_encode,
 * through assert, before it can corrupt a queue. */

/* Packs ptr and type into one word, never 0. */
static inline job_word job_encode(void *ptr, unsigned type) {
    /*@ exercise: job-encode */
    assert(ptr != NULL && ((uintptr_t)ptr & JOB_TYPE_MASK) == 0);
    assert(type <= JOB_TYPE_MASK);
    return (uintptr_t)ptr | type;
    /*@ end */
}

/* The type job_encode packed: a job_request or a job_result value,
 * depending on which queue the word came from. */
static inline unsigned job_type(job_word job) {
    /*@ exercise: job-type */
    return (unsigned)(job & JOB_TYPE_MASK);
    /*@ end */
}

/* The payload pointer job_encode packed. */
static inline void *job_ptr(job_word job) {
    /*@ exercise: job-ptr */
    return (void *)(job & ~JOB_TYPE_MASK);
    /*@ end */
}
/*@ end */

#endif
