/* budget: one memory budget for everything the server holds for requests (docs/memory.md).
 *
 * A request on the webhook port is charged for what it really makes the server hold, as it
 * happens: its body's buffer as the bytes arrive (a hold, below), then, once the body is whole,
 * the most its decision can allocate (jg_budget_take), and, while the answer is being sent, the
 * answer's copy (the hold again). Nothing is reserved for bytes a client has only announced.
 * Holds and large decisions together stay within three quarters of the budget, so the last
 * quarter always decides the small reviews the API server sends. When the hold of a small
 * request does not fit, the holds of requests that started earlier are evicted, oldest first
 * (their connections are shut down): a client that stalls cannot keep bytes that a newer review
 * needs. */
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
/* per open connection, beside --connection-memory-limit: the TLS session, its record buffer and a
 * handshake of up to JG_TLS_MAX_HANDSHAKE_BYTES (the worst state, measured in
 * docs/memory.md) */
#define JG_BUDGET_CONNECTION_BASE ((uint64_t)16 << 10)
/* budget when no cgroup memory limit is found (a developer's machine) */
#define JG_BUDGET_UNLIMITED_DEFAULT ((uint64_t)256 << 20)
/* The most TLS bytes a client may send before its handshake is done (GnuTLS buffers a whole
 * handshake message before it parses it): the API server's ClientHello is under 2 KiB, a client
 * certificate chain a few KiB. */
#define JG_TLS_MAX_HANDSHAKE_BYTES ((size_t)16 << 10)
/* the smallest budget serve starts with: one realistic review and then some */
#define JG_BUDGET_MIN ((uint64_t)4 << 20)
/* a body up to this is "small", as most of the API server's are: it may evict older holds */
#define JG_BUDGET_SMALL_BODY ((size_t)64 << 10)
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
/* Reserves a request's decision once its body (body_len bytes, held by its hold) is whole: the
 * cost of the request less the body itself. */
enum jg_budget_answer jg_budget_take(size_t body_len, uint64_t *cost);
/* Gives back what jg_budget_take reserved for this body length. */
void jg_budget_give(size_t body_len, uint64_t cost);

/* Bytes one request holds while its client decides how long: its body as it arrives, then its
 * answer until it is sent. Owned by the request's thread; listed while it holds anything. */
struct jg_budget_hold {
    uint64_t bytes; /* charged now */
    uint64_t seq;   /* the request's place in order of arrival (its headers) */
    int fd;         /* the connection, shut down when the hold is evicted */
    bool evicted;   /* given back by an eviction: the request must end */
    bool listed;
    struct jg_budget_hold *prev, *next;
};
/* Grows the hold to `bytes` (never shrinks it). When that does not fit and may_evict is set (a
 * small request: JG_BUDGET_SMALL_BODY), holds of older requests are evicted until it does; false
 * (nothing changed) when it cannot fit or the hold was evicted. */
bool jg_budget_hold_grow(struct jg_budget_hold *h, uint64_t bytes, bool may_evict);
/* Sets the hold to `bytes` whatever the room: an answer that replaces the body and the decision
 * reserved for it (never more than they held). */
void jg_budget_hold_set(struct jg_budget_hold *h, uint64_t bytes);
/* Whether another request evicted the hold (read under the budget's lock). */
bool jg_budget_hold_evicted(struct jg_budget_hold *h);
/* Gives back what the hold holds and unlists it. */
void jg_budget_hold_release(struct jg_budget_hold *h);
uint64_t jg_budget_evicted(void); /* requests evicted since start */
/* Connections shut down to make room for a new one (the transport's connection limits). */
void jg_budget_note_connection_evicted(void);
uint64_t jg_budget_connections_evicted(void);

/* The largest body a request may have under this budget (at most JG_MAX_BODY_BYTES). */
size_t jg_budget_max_body(void);
uint64_t jg_budget_total(void);
uint64_t jg_budget_held(void);
uint64_t jg_budget_refused(void); /* requests answered 503 for want of budget, since start */

#endif
