/* budget: the memory budget of requests in flight (include/jobguard/server/budget.h). */
#include "jobguard/server/budget.h"

#include <pthread.h>
#include <stdatomic.h>

#include "jobguard/decode.h"

/* The decision's allocations per body byte at most (tests/test_budget.c measures every shape). */
#define DECISION_PER_BYTE 10
/* The rendered errors and the response: up to 2,000 causes of a few hundred bytes each from a
 * body of a few KB, bounded by the renderer's limits. */
#define RENDER_PER_BYTE 512
#define RENDER_BASE ((uint64_t)64 << 10)
#define RENDER_MAX ((uint64_t)2 << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t total, held, held_large;
static atomic_uint_fast64_t refused;

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
    held = held_large = 0;
    pthread_mutex_unlock(&lock);
    atomic_store(&refused, 0);
}

enum jg_budget_answer jg_budget_take(size_t body_len, uint64_t *cost) {
    uint64_t c = jg_budget_request_cost(body_len);
    *cost = c;
    bool large = body_len > JG_BUDGET_LARGE_BODY;
    enum jg_budget_answer a = JG_BUDGET_TAKEN;
    pthread_mutex_lock(&lock);
    if (c > share(body_len, total))
        a = JG_BUDGET_NEVER;
    else if (c > total - held || (large && c > share(body_len, total) - held_large))
        a = JG_BUDGET_BUSY;
    else {
        held += c;
        if (large) held_large += c;
    }
    pthread_mutex_unlock(&lock);
    if (a == JG_BUDGET_BUSY) atomic_fetch_add(&refused, 1);
    return a;
}

void jg_budget_give(size_t body_len, uint64_t cost) {
    pthread_mutex_lock(&lock);
    held -= cost;
    if (body_len > JG_BUDGET_LARGE_BODY) held_large -= cost;
    pthread_mutex_unlock(&lock);
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
    uint64_t h = held;
    pthread_mutex_unlock(&lock);
    return h;
}

uint64_t jg_budget_refused(void) {
    return atomic_load(&refused);
}
