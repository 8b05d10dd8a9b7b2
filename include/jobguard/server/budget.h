/* budget: one memory budget for everything the server holds for requests (docs/memory.md).
 *
 * A request on the webhook port reserves its cost, jg_budget_request_cost(Content-Length), when
 * its headers have arrived and before a byte of its body is read: the buffered body and the most
 * its decision can allocate (the view, the errors, the response). The reservation is given back
 * when the request completes, however it ends. What does not fit now is answered 503 with
 * Retry-After; what could never fit is answered 413. Requests with large bodies together hold at
 * most three quarters of the budget, so a client sending the largest bodies cannot starve the
 * small reviews the API server sends. */
#ifndef JOBGUARD_SERVER_BUDGET_H
#define JOBGUARD_SERVER_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the process holds outside the budget, subtracted from the container's memory limit to get
 * the default budget (measured figures in docs/memory.md): */
/* code, libraries, threads, metrics, certificates, TLS credentials */
#define JG_BUDGET_PROCESS_RESERVE ((uint64_t)16 << 20)
/* the policy at its 1 MiB file limit, twice while a reload builds the new snapshot */
#define JG_BUDGET_POLICY_RESERVE ((uint64_t)32 << 20)
/* per open connection: the TLS session and buffers, plus --connection-memory-limit */
#define JG_BUDGET_CONNECTION_BASE ((uint64_t)16 << 10)
/* budget when no cgroup memory limit is found (a developer's machine) */
#define JG_BUDGET_UNLIMITED_DEFAULT ((uint64_t)256 << 20)
/* the smallest budget serve starts with: one realistic review and then some */
#define JG_BUDGET_MIN ((uint64_t)4 << 20)
/* a body above this is "large": large requests share at most 3/4 of the budget */
#define JG_BUDGET_LARGE_BODY ((size_t)1 << 20)

/* Bytes a request with a body of `body_len` bytes reserves: the body, ten times its length for
 * the decision (the worst shapes reach 9.3x: tests/test_budget.c), and a part for the rendered
 * errors and the response that grows with the body up to 2 MiB. */
uint64_t jg_budget_request_cost(size_t body_len);

/* The default budget for a container memory limit (0: none) and the connection settings; 0 when
 * the limit leaves less than JG_BUDGET_MIN. */
uint64_t jg_budget_default(uint64_t memory_limit, unsigned max_connections,
                           size_t connection_memory_limit);

/* The memory a container needs so that the default budget is `budget`: the inverse of
 * jg_budget_default, for the chart's arithmetic and `jobguard serve --help`. */
uint64_t jg_budget_limit_for(uint64_t budget, unsigned max_connections,
                             size_t connection_memory_limit);

void jg_budget_init(uint64_t total);

enum jg_budget_answer {
    JG_BUDGET_TAKEN,
    JG_BUDGET_BUSY,  /* does not fit now: 503, retry */
    JG_BUDGET_NEVER, /* more than its share of the whole budget: 413 */
};
/* Reserves the cost of a request with this body length. */
enum jg_budget_answer jg_budget_take(size_t body_len, uint64_t *cost);
/* Gives back what jg_budget_take reserved for this body length. */
void jg_budget_give(size_t body_len, uint64_t cost);

/* The largest body a request may have under this budget (at most JG_MAX_BODY_BYTES). */
size_t jg_budget_max_body(void);
uint64_t jg_budget_total(void);
uint64_t jg_budget_held(void);
uint64_t jg_budget_refused(void); /* requests answered 503 for want of budget, since start */

#endif
