/* budget: the memory budget of requests in flight (include/jobguard/server/budget.h). */
#include "jobguard/server/budget.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "jobguard/decode.h"

/* The decision's allocations per body byte at most (tests/test_budget.c measures every shape). */
#define DECISION_PER_BYTE 10
/* The rendered errors and the response: up to 2,000 causes of a few hundred bytes each from a
 * body of a few KB, bounded by the renderer's limits. */
#define RENDER_PER_BYTE 512
#define RENDER_BASE ((uint64_t)64 << 10)
#define RENDER_MAX ((uint64_t)2 << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* held_dec: decisions (held_large: those of large bodies); held_hold: holds (bodies arriving,
 * answers being sent), listed oldest first */
static uint64_t total, held_dec, held_large, held_hold;
static struct jg_budget_hold *holds_head, *holds_tail;
static atomic_uint_fast64_t refused, evicted, connections_evicted;

uint64_t jg_budget_request_cost(size_t body_len) {
    uint64_t n = body_len;
    uint64_t render = RENDER_PER_BYTE * n + RENDER_BASE;
    if (render > RENDER_MAX) render = RENDER_MAX;
    return (n + 1) + DECISION_PER_BYTE * n + render;
}

static uint64_t connections_reserve(unsigned max_connections, size_t connection_memory_limit) {
    return (uint64_t)max_connections * (JG_BUDGET_CONNECTION_BASE + connection_memory_limit);
}

uint64_t jg_budget_default(uint64_t memory_limit, unsigned max_connections,
                           size_t connection_memory_limit) {
    if (!memory_limit) return JG_BUDGET_UNLIMITED_DEFAULT;
    uint64_t reserve = JG_BUDGET_PROCESS_RESERVE + JG_BUDGET_POLICY_RESERVE +
                       connections_reserve(max_connections, connection_memory_limit);
    if (memory_limit < reserve + JG_BUDGET_MIN) return 0;
    return memory_limit - reserve;
}

uint64_t jg_budget_limit_for(uint64_t budget, unsigned max_connections,
                             size_t connection_memory_limit) {
    return budget + JG_BUDGET_PROCESS_RESERVE + JG_BUDGET_POLICY_RESERVE +
           connections_reserve(max_connections, connection_memory_limit);
}

static uint64_t share(size_t body_len, uint64_t of) {
    return body_len > JG_BUDGET_LARGE_BODY ? of - of / 4 : of;
}

void jg_budget_init(uint64_t t) {
    pthread_mutex_lock(&lock);
    total = t;
    held_dec = held_large = held_hold = 0;
    holds_head = holds_tail = NULL;
    pthread_mutex_unlock(&lock);
    atomic_store(&refused, 0);
    atomic_store(&evicted, 0);
}

/* Three quarters of the budget: what holds and large decisions may take together. */
static uint64_t client_share(void) {
    return total - total / 4;
}

enum jg_budget_answer jg_budget_take(size_t body_len, uint64_t *cost) {
    uint64_t full = jg_budget_request_cost(body_len);
    uint64_t c = full - ((uint64_t)body_len + 1); /* the body is its hold's */
    *cost = c;
    bool large = body_len > JG_BUDGET_LARGE_BODY;
    enum jg_budget_answer a = JG_BUDGET_TAKEN;
    pthread_mutex_lock(&lock);
    if (full > share(body_len, total))
        a = JG_BUDGET_NEVER;
    else if (held_hold + held_dec + c > total ||
             (large && held_hold + held_large + c > client_share()))
        a = JG_BUDGET_BUSY;
    else {
        held_dec += c;
        if (large) held_large += c;
    }
    pthread_mutex_unlock(&lock);
    if (a == JG_BUDGET_BUSY) atomic_fetch_add(&refused, 1);
    return a;
}

void jg_budget_give(size_t body_len, uint64_t cost) {
    pthread_mutex_lock(&lock);
    held_dec -= cost;
    if (body_len > JG_BUDGET_LARGE_BODY) held_large -= cost;
    pthread_mutex_unlock(&lock);
}

static void unlist(struct jg_budget_hold *h) {
    if (!h->listed) return;
    if (h->prev)
        h->prev->next = h->next;
    else
        holds_head = h->next;
    if (h->next)
        h->next->prev = h->prev;
    else
        holds_tail = h->prev;
    h->prev = h->next = NULL;
    h->listed = false;
    held_hold -= h->bytes;
    h->bytes = 0;
}

static bool hold_fits(uint64_t more) {
    return held_hold + held_large + more <= client_share() && held_hold + held_dec + more <= total;
}

bool jg_budget_hold_grow(struct jg_budget_hold *h, uint64_t bytes, bool may_evict) {
    bool ok = true;
    pthread_mutex_lock(&lock);
    if (h->evicted)
        ok = false;
    else if (bytes > h->bytes) {
        uint64_t more = bytes - h->bytes;
        /* evict holds of requests that began before this one, oldest first (the list is in
         * order of first charge, so the oldest is looked for by its start, not its place) */
        while (may_evict && !hold_fits(more)) {
            struct jg_budget_hold *v = NULL;
            for (struct jg_budget_hold *x = holds_head; x; x = x->next)
                if (x != h && x->seq < h->seq && (!v || x->seq < v->seq)) v = x;
            if (!v) break;
            unlist(v);
            v->evicted = true;
            if (v->fd >= 0) shutdown(v->fd, SHUT_RDWR); /* its thread sees the error and ends it */
            atomic_fetch_add(&evicted, 1);
        }
        if (!hold_fits(more)) {
            ok = false;
            atomic_fetch_add(&refused, 1);
        } else {
            if (!h->listed) {
                h->prev = holds_tail;
                h->next = NULL;
                if (holds_tail)
                    holds_tail->next = h;
                else
                    holds_head = h;
                holds_tail = h;
                h->listed = true;
            }
            h->bytes = bytes;
            held_hold += more;
        }
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

void jg_budget_hold_set(struct jg_budget_hold *h, uint64_t bytes) {
    pthread_mutex_lock(&lock);
    if (h->listed && !h->evicted) {
        held_hold = held_hold - h->bytes + bytes;
        h->bytes = bytes;
    }
    pthread_mutex_unlock(&lock);
}

bool jg_budget_hold_evicted(struct jg_budget_hold *h) {
    pthread_mutex_lock(&lock);
    bool e = h->evicted;
    pthread_mutex_unlock(&lock);
    return e;
}

void jg_budget_hold_release(struct jg_budget_hold *h) {
    pthread_mutex_lock(&lock);
    unlist(h);
    pthread_mutex_unlock(&lock);
}

uint64_t jg_budget_evicted(void) {
    return atomic_load(&evicted);
}

void jg_budget_note_connection_evicted(void) {
    atomic_fetch_add(&connections_evicted, 1);
}

uint64_t jg_budget_connections_evicted(void) {
    return atomic_load(&connections_evicted);
}

size_t jg_budget_max_body(void) {
    pthread_mutex_lock(&lock);
    uint64_t t = total;
    pthread_mutex_unlock(&lock);
    /* fits(len) only turns false as len grows (cost grows, the share drops past 1 MiB) */
    size_t lo = 0, hi = JG_MAX_BODY_BYTES;
    if (jg_budget_request_cost(hi) <= share(hi, t)) return hi;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (jg_budget_request_cost(mid) <= share(mid, t))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint64_t jg_budget_total(void) {
    pthread_mutex_lock(&lock);
    uint64_t t = total;
    pthread_mutex_unlock(&lock);
    return t;
}

uint64_t jg_budget_held(void) {
    pthread_mutex_lock(&lock);
    uint64_t h = held_dec + held_hold;
    pthread_mutex_unlock(&lock);
    return h;
}

uint64_t jg_budget_refused(void) {
    return atomic_load(&refused);
}
