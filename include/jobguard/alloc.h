/* Every allocation of the engine goes through these hooks so that a chaos test can fail the Nth one
 * (and jansson's are routed here too by jg_alloc_set). */
#ifndef JOBGUARD_ALLOC_H
#define JOBGUARD_ALLOC_H

#include <stddef.h>

void *jg_malloc(size_t n);
void *jg_realloc(void *p, size_t n);
void jg_free(void *p);

typedef void *(*jg_malloc_fn)(size_t);
typedef void *(*jg_realloc_fn)(void *, size_t);
typedef void (*jg_free_fn)(void *);

/* Replace the allocator (NULL restores libc). Not thread-safe: call before any other thread starts.
 */
void jg_alloc_set(jg_malloc_fn m, jg_realloc_fn r, jg_free_fn f);

#endif
