#include "jobguard/alloc.h"

#include <jansson.h>
#include <stdlib.h>

static jg_malloc_fn m_fn = malloc;
static jg_realloc_fn r_fn = realloc;
static jg_free_fn f_fn = free;

void *jg_malloc(size_t n) {
    return m_fn(n ? n : 1);
}

void *jg_realloc(void *p, size_t n) {
    return r_fn(p, n ? n : 1);
}

void jg_free(void *p) {
    f_fn(p);
}

/* jansson allocates through the same functions. */
static void install_jansson(void) {
    json_set_alloc_funcs(m_fn, f_fn);
}

void jg_alloc_set(jg_malloc_fn m, jg_realloc_fn r, jg_free_fn f) {
    m_fn = m ? m : malloc;
    r_fn = r ? r : realloc;
    f_fn = f ? f : free;
    install_jansson();
}
