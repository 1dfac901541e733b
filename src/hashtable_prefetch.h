/* hashtable_prefetch.h — the one prefetch of the resumable find and of
 * step 6's walk, so that the tests can see every address it is given.
 *
 * Step 6 (keyspace layer). Owns: PREFETCH(addr), which
 * hashtable_incremental_find.c and memory_prefetch.c use for every
 * prefetch they issue, and nothing else.
 * Threads: whichever thread runs the code that uses it (main only, for
 * both files).
 * Valkey: src/config.h's valkey_prefetch, which its memory_prefetch.c
 * calls (__builtin_prefetch where the compiler has it; so in Valkey 9.1
 * and in its 2024 source).
 *
 * In the server PREFETCH is __builtin_prefetch itself: one instruction,
 * no call, no branch, no global to load. A prefetch has no effect a test
 * can read back (it changes no value, only when a later load finds its
 * line in cache), so a test that wants to check which line a step
 * prefetched has to see the address some other way. The way chosen costs
 * the server nothing:
 *
 *   - a file that defines SOLOIST_PREFETCH_HOOK to the name of a function
 *     before it includes this header gets PREFETCH(addr) as a call of that
 *     function, `void NAME(const void *addr)`, which it defines;
 *   - only tests/unit/test_memory_prefetch.c does, and it compiles its own
 *     copy of the two files (it #includes hashtable_incremental_find.c and
 *     memory_prefetch.c after the definition), so the test binary's find
 *     and walk record each address while libsoloist.a's objects, which the
 *     server links, never see the definition. The linker takes no object
 *     from the library for a symbol the test's object already defines, so
 *     the test runs its recording copy and the server the plain one.
 *
 * The alternatives cost the server something on every prefetch: a weak
 * function that a test overrides is a call the compiler cannot inline
 * (and a test of whether it is set is still a load and a branch); a
 * global function pointer is a load and an indirect call. Setting the
 * hook for all of libsoloist.a would need a second build of the whole
 * library for this one test; here only the two files the test is about
 * are compiled twice, and they differ from the server's by this macro
 * alone. The grader builds the test file from the
 * learner's copies the same way (it #includes src/'s files, which in the
 * grader's tree are the learner's), so a learner's find is graded on the
 * addresses it prefetches.
 */
#ifndef SOLOIST_HASHTABLE_PREFETCH_H
#define SOLOIST_HASHTABLE_PREFETCH_H

#ifdef SOLOIST_PREFETCH_HOOK
void SOLOIST_PREFETCH_HOOK(const void *addr);
#define PREFETCH(addr) SOLOIST_PREFETCH_HOOK(addr)
#else
#define PREFETCH(addr) __builtin_prefetch(addr)
#endif

#endif
