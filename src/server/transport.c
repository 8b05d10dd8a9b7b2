/* transport: libmicrohttpd handlers for the webhook (TLS) and ops (plain) ports. */
#include "transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "jobguard/admit.h"
#include "jobguard/alloc.h"
#include "jobguard/decode.h"
#include "jobguard/encode.h"
#include "jobguard/server/budget.h"
#include "jobguard/server/log.h"
#include "metrics.h"
#include "policywatch.h"
#include "tlscert.h"

/* Ops port: probes and scrapers. Kubelet probes come from the node's IP, Prometheus from its
 * own: a per-IP limit keeps one client (a pod trickling bytes) from taking many slots, the
 * request deadline (as on the webhook port) frees a slot held by a slow client, and a new
 * connection near the limit evicts the longest-waiting one (make_room), so that clients with
 * many addresses cannot keep a probe out either. */
#define OPS_MAX_CONNECTIONS 256
#define OPS_MAX_CONNECTIONS_PER_IP 16
#define OPS_REQUEST_DEADLINE_S 5
#define OPS_TIMEOUT_S 30
/* A TLS handshake takes milliseconds; kube-apiserver gives up on one after 10 s. */
#define JG_HANDSHAKE_TIMEOUT_S 10
/* A body buffer grows to what has arrived and at most as much again, at least this much. */
#define BODY_WINDOW ((size_t)16 << 10)

static struct jg_server_config g_cfg;
/* Callback cls that marks the ops daemon (NULL: the webhook daemon). */
static const int g_ops_port;
static struct MHD_Daemon *g_tls, *g_ops;
static atomic_bool g_draining, g_closing;
/* The largest body the memory budget can ever take (jg_budget_max_body); larger ones get 413. */
static size_t g_max_body;

/* Per TCP connection (MHD "socket context"): buffers reused by its keep-alive requests, the
 * client-certificate verdict, computed once per TLS session, and the request deadline. */
struct conn_ctx {
    jg_buf body;
    jg_buf resp;
    int mtls; /* 0: not checked, 1: accepted, -1: rejected */
    MHD_socket fd;
    int64_t deadline_ms;              /* for each request's headers (and body); 0: none */
    int64_t started_ms;               /* when the connection was accepted */
    _Atomic int64_t waiting_since_ms; /* for the next request's headers; -1 while handling one */
    _Atomic int64_t request_since_ms; /* the current request's headers arrived */
    atomic_bool handshaken;           /* TLS: the client's Finished has arrived (ops: true) */
    size_t handshake_read;            /* TLS bytes read before that (tls_pull) */
    bool ops;                         /* on the ops port */
    bool cut;                         /* shut down (under g_conns_lock) */
    struct conn_ctx *prev, *next;     /* g_conns, under g_conns_lock */
};

/* Slowloris guard. libmicrohttpd's connection timeout restarts with every byte, so a client
 * trickling one byte a second would hold a connection for ever. Here a watchdog thread shuts
 * down every connection that misses a deadline, whether or not bytes arrive: the TLS handshake
 * within JG_HANDSHAKE_TIMEOUT_S of the connection's start, each request's headers within
 * --connection-timeout of the connection's start or the end of the previous request, and the
 * rest of the request (body, decision, answer) within --connection-timeout of its headers. */
static pthread_mutex_t g_conns_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn_ctx *g_conns;
/* open connections per port not shut down yet (webhook, ops), under g_conns_lock */
static unsigned g_live[2];
static pthread_t g_watchdog;
static atomic_bool g_watchdog_stop;
static bool g_watchdog_running;
#define WATCHDOG_TICK_MS 200
static atomic_uint_fast64_t g_request_seq; /* orders requests for budget evictions */

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Shuts a connection down (under g_conns_lock): libmicrohttpd sees the error and closes it. */
static void cut(struct conn_ctx *cc) {
    shutdown(cc->fd, SHUT_RDWR);
    cc->cut = true;
    g_live[cc->ops]--;
}

static bool missed_deadline(struct conn_ctx *cc, int64_t now) {
    if (!atomic_load(&cc->handshaken) && now - cc->started_ms > JG_HANDSHAKE_TIMEOUT_S * 1000)
        return true;
    if (!cc->deadline_ms) return false;
    int64_t waiting = atomic_load(&cc->waiting_since_ms);
    int64_t request = atomic_load(&cc->request_since_ms);
    return waiting >= 0 ? now - waiting > cc->deadline_ms
                        : request > 0 && now - request > cc->deadline_ms;
}

/* A new connection near its port's limit: the connection that has waited longest shuts down
 * (for its handshake or next request, counted from its start or its last request's end, or for
 * the rest of a request, counted from its headers), so that the newest, which the API server or
 * the kubelet has just opened to send a request, always gets a slot. Under g_conns_lock. */
static void make_room(struct conn_ctx *fresh, unsigned limit) {
    unsigned headroom = limit / 16 ? limit / 16 : 1;
    if (limit < 2 || g_live[fresh->ops] + headroom <= limit) return;
    struct conn_ctx *victim = NULL;
    int64_t oldest = 0;
    for (struct conn_ctx *cc = g_conns; cc; cc = cc->next) {
        if (cc == fresh || cc->cut || cc->ops != fresh->ops) continue;
        int64_t since = atomic_load(&cc->waiting_since_ms);
        if (since < 0) since = atomic_load(&cc->request_since_ms);
        if (!victim || since < oldest) victim = cc, oldest = since;
    }
    if (victim) {
        cut(victim);
        jg_budget_note_connection_evicted();
    }
}

static void *watchdog(void *arg) {
    (void)arg;
    while (!atomic_load(&g_watchdog_stop)) {
        nanosleep(&(struct timespec){0, WATCHDOG_TICK_MS * 1000000L}, NULL);
        int64_t now = now_ms();
        pthread_mutex_lock(&g_conns_lock);
        for (struct conn_ctx *cc = g_conns; cc; cc = cc->next)
            if (!cc->cut && missed_deadline(cc, now)) cut(cc);
        pthread_mutex_unlock(&g_conns_lock);
    }
    return NULL;
}

/* Per HTTP request, created by uri_seen when the request line has arrived. */
struct req_ctx {
    struct timespec start;
    bool started; /* the handler has seen the headers */
    bool in_flight;
    const char *bad_target;     /* the raw request target is refused: why */
    size_t body_len;            /* Content-Length, the most body bytes read */
    struct jg_budget_hold hold; /* the body as it arrives, then the answer until it is sent */
    uint64_t reserved;          /* the decision's reservation, while it runs */
    uint64_t shed_cost; /* not 0: the budget could not hold this request; its body is dropped */
    uint64_t shed_held; /* what requests in flight held when it was shed */
    size_t shed_read;   /* body bytes dropped so far */
};

static double since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void client_ip(struct MHD_Connection *c, char *buf, size_t n) {
    snprintf(buf, n, "?");
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr) return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf,
                  (socklen_t)n);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf,
                  (socklen_t)n);
}

static struct conn_ctx *conn_of(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* How respond() gets its body: a literal that lives for ever, bytes libmicrohttpd copies (a
 * buffer on the stack), or a jg_buf's buffer handed over, which libmicrohttpd frees once sent. */
enum body_kind { BODY_STATIC, BODY_COPY, BODY_HANDED };

/* Queues the answer of either port: `close` adds Connection: close, `allow` and `retry_after`
 * their headers when not NULL. A handed-over buffer is freed here if the response cannot be made.
 */
static enum MHD_Result respond(struct MHD_Connection *c, unsigned code, const char *ctype,
                               const char *body, size_t len, enum body_kind kind, bool close,
                               const char *allow, const char *retry_after) {
    void *data = (void *)(uintptr_t)body;
    struct MHD_Response *r =
        kind == BODY_HANDED
            ? MHD_create_response_from_buffer_with_free_callback(len, data, jg_free)
            : MHD_create_response_from_buffer(
                  len, data, kind == BODY_STATIC ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_COPY);
    if (!r) {
        if (kind == BODY_HANDED) jg_free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (close) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (allow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    if (retry_after) MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry_after);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

/* respond() with a jg_buf's bytes handed over (b is left empty), on the webhook port: closes the
 * connection after the answer while the server shuts down. MHD_NO when b ran out of memory. */
static enum MHD_Result respond_webhook(struct MHD_Connection *c, unsigned code, jg_buf *b,
                                       bool close, const char *allow, const char *retry_after) {
    close = close || atomic_load_explicit(&g_closing, memory_order_relaxed);
    enum MHD_Result ret = b->oom || !b->data ? MHD_NO
                                             : respond(c, code, "application/json", b->data, b->len,
                                                       BODY_HANDED, close, allow, retry_after);
    if (b->oom) jg_buf_free(b);
    *b = (jg_buf)JG_BUF_INIT;
    return ret;
}

/* A transport-level refusal on the webhook port: the HTTP code, an AdmissionReview-shaped body
 * (what controller-runtime writes), a warn log line and the response counter. */
static enum MHD_Result refuse_with(struct MHD_Connection *c, const char *method, const char *url,
                                   unsigned code, const char *reason, const char *message,
                                   bool close, const char *allow, const char *retry_after) {
    jg_buf b = JG_BUF_INIT;
    jg_encode_error(&b, JG_API_V1, (jg_str){"", 0}, (int)code, reason, message);
    enum MHD_Result ret = respond_webhook(c, code, &b, close, allow, retry_after);
    jg_metrics_http_response(code);
    struct jg_log l;
    if (jg_log_begin(&l, code >= 500 && code != 503 ? JG_LOG_ERROR : JG_LOG_WARN,
                     "request refused")) {
        char ip[64];
        client_ip(c, ip, sizeof ip);
        jg_log_uint(&l, "code", code);
        jg_log_str(&l, "reason", message);
        jg_log_str(&l, "method", method);
        jg_log_str(&l, "path", url);
        jg_log_str(&l, "remote", ip);
        jg_log_end(&l);
    }
    return ret;
}

static enum MHD_Result refuse(struct MHD_Connection *c, const char *method, const char *url,
                              unsigned code, const char *reason, const char *message, bool close,
                              const char *allow) {
    return refuse_with(c, method, url, code, reason, message, close, allow, NULL);
}

/* application/json, optionally followed by parameters (charset=utf-8); case-insensitive type. */
static bool json_content_type(const char *ct) {
    static const char want[] = "application/json";
    if (!ct || strncasecmp(ct, want, sizeof want - 1) != 0) return false;
    const char *rest = ct + sizeof want - 1;
    while (*rest == ' ' || *rest == '\t')
        rest++;
    return *rest == '\0' || *rest == ';';
}

/* Strict decimal Content-Length, saturating at ULLONG_MAX (a value too large for 64 bits is
 * still a number, and too large: 413); false on garbage (MHD has already rejected most of it). */
static bool parse_length(const char *s, unsigned long long *out) {
    if (!s || !*s) return false;
    unsigned long long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        unsigned d = (unsigned)(*s - '0');
        v = v > (ULLONG_MAX - d) / 10 ? ULLONG_MAX : v * 10 + d;
    }
    *out = v;
    return true;
}

/* RFC 9110 5.6.2 token characters, for header names. */
static bool tchar(unsigned char ch) {
    if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
        return true;
    return ch && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/* One pass over the request's header fields (RFC 9112): what libmicrohttpd 0.9.75 lets through
 * and jobguard refuses. It stores each field as pointers into its read buffer, zero-terminating
 * the value where the line ended ("\r\n" -> "\0\0"); a NUL inside a value shows as bytes left
 * between the end of one value and the next name, so the gaps are checked too (only when the
 * fields lie in order inside the header block; otherwise that one check is skipped). */
struct header_scan {
    const char *block, *block_end; /* the header block as received, request line first */
    const char *prev_end;          /* end of the previous field's value */
    unsigned host, content_length, transfer_encoding;
    const char *length, *encoding; /* first Content-Length / Transfer-Encoding */
    bool lengths_differ;
    const char *bad; /* what is wrong, NULL if nothing */
};

static bool only_nul_gap(const char *from, const char *to, size_t max) {
    if (to < from || (size_t)(to - from) > max) return false;
    for (; from < to; from++)
        if (*from) return false;
    return true;
}

static enum MHD_Result scan_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                  size_t key_size, const char *value, size_t value_size) {
    (void)kind;
    struct header_scan *s = cls;
    if (key_size == 0) return s->bad = "empty header field name", MHD_NO;
    for (size_t i = 0; i < key_size; i++)
        if (!tchar((unsigned char)key[i]))
            return s->bad = "invalid character in a header field name (white space before the "
                            "colon?)",
                   MHD_NO;
    for (size_t i = 0; i < value_size; i++) {
        unsigned char ch = (unsigned char)value[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return s->bad = "control character (CR, NUL, ...) in a header field value", MHD_NO;
    }
    /* a line ends in "\0\0" (CRLF) or "\0" (LF); anything else between fields was hidden */
    bool ordered = s->block && key >= s->block && value + value_size <= s->block_end;
    if (!ordered) s->block = NULL;
    if (s->block && s->prev_end && !only_nul_gap(s->prev_end, key, 2))
        return s->bad = "malformed header field (a NUL character, or a line without a name)",
               MHD_NO;
    s->prev_end = value + value_size;
    if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) s->host++;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (s->content_length++ == 0)
            s->length = value;
        else if (strcmp(s->length, value) != 0)
            s->lengths_differ = true;
    }
    if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0 && s->transfer_encoding++ == 0)
        s->encoding = value;
    return MHD_YES;
}

/* The framing and header checks shared by both ports. Returns 0 when the request may go on, or
 * the HTTP code to refuse it with (the reason in *why). */
static unsigned check_request_framing(struct MHD_Connection *c, const char *method,
                                      const char **why) {
    struct header_scan s = {0};
    const union MHD_ConnectionInfo *hi =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (hi && method) {
        s.block = method; /* libmicrohttpd's request line starts its header block */
        s.block_end = method + hi->header_size;
    }
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, scan_field, &s);
    if (!s.bad && s.block && s.prev_end && !only_nul_gap(s.prev_end, s.block_end, 4))
        s.bad = "malformed header field (a NUL character, or a line without a name)";
    if (s.bad) return *why = s.bad, MHD_HTTP_BAD_REQUEST;
    if (s.host != 1)
        return *why = s.host ? "more than one Host header field" : "missing Host header field",
               MHD_HTTP_BAD_REQUEST;
    if (s.transfer_encoding && s.content_length)
        return *why = "both Transfer-Encoding and Content-Length", MHD_HTTP_BAD_REQUEST;
    if (s.lengths_differ) return *why = "conflicting Content-Length values", MHD_HTTP_BAD_REQUEST;
    if (s.transfer_encoding > 1 || (s.encoding && strcasecmp(s.encoding, "chunked") != 0))
        return *why = "unsupported Transfer-Encoding (only a Content-Length body is accepted)",
               MHD_HTTP_NOT_IMPLEMENTED;
    if (s.encoding)
        return *why =
                   "a chunked body is not accepted, send Content-Length (as kube-apiserver does)",
               MHD_HTTP_LENGTH_REQUIRED;
    return 0;
}

static bool has_body_headers(struct MHD_Connection *c) {
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long n;
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
           (cl && (!parse_length(cl, &n) || n > 0));
}

/* First call of a request: everything decided from the request line and headers. Returns
 * MHD_YES with nothing queued to go on reading the body. */
static enum MHD_Result validate_headers(struct MHD_Connection *c, struct conn_ctx *cc,
                                        struct req_ctx *r, const char *url, const char *method) {
    const char *why = r->bad_target;
    unsigned code = why ? MHD_HTTP_BAD_REQUEST : check_request_framing(c, method, &why);
    if (code)
        return refuse(c, method, url, code,
                      code == MHD_HTTP_NOT_IMPLEMENTED   ? "NotImplemented"
                      : code == MHD_HTTP_LENGTH_REQUIRED ? "LengthRequired"
                                                         : "BadRequest",
                      why, true, NULL);
    if (strcmp(url, "/validate") != 0)
        return refuse(c, method, url, MHD_HTTP_NOT_FOUND, "NotFound",
                      "the server could not find the requested resource", has_body_headers(c),
                      NULL);
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return refuse(c, method, url, MHD_HTTP_METHOD_NOT_ALLOWED, "MethodNotAllowed",
                      "method not allowed, expected POST", has_body_headers(c), "POST");

    /* the whole header block as received: request line (query string included) and headers */
    const union MHD_ConnectionInfo *hi =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (hi && hi->header_size > g_cfg.max_header_bytes) {
        char msg[128];
        snprintf(msg, sizeof msg, "request headers are too large; limit is %zu bytes",
                 g_cfg.max_header_bytes);
        return refuse(c, method, url, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
                      "RequestHeaderFieldsTooLarge", msg, true, NULL);
    }

    if (g_cfg.client_ca_pem) {
        char bad[256] = "";
        if (cc->mtls == 0) {
            const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
            cc->mtls =
                ci && ci->tls_session &&
                        jg_tls_verify_client(ci->tls_session, g_cfg.client_cn, bad, sizeof bad)
                    ? 1
                    : -1;
            if (cc->mtls < 0 && !bad[0]) snprintf(bad, sizeof bad, "no TLS session");
        }
        if (cc->mtls < 0)
            return refuse(c, method, url, MHD_HTTP_FORBIDDEN, "Forbidden",
                          bad[0] ? bad : "client certificate rejected", true, NULL);
    }

    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!json_content_type(ct)) {
        char got[100], msg[160]; /* a long header is quoted up to its first bytes and a marker */
        jg_copy_cut(got, sizeof got, ct ? ct : "", ct ? strlen(ct) : 0);
        snprintf(msg, sizeof msg, "contentType=%s, expected application/json", got);
        return refuse(c, method, url, MHD_HTTP_BAD_REQUEST, "BadRequest", msg, has_body_headers(c),
                      NULL);
    }

    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long len = 0;
    if (cl && parse_length(cl, &len)) {
        /* the body limit, lowered where the memory budget could never hold such a request */
        if (len > g_max_body) {
            char msg[128];
            snprintf(msg, sizeof msg, "request entity is too large; limit is %zu bytes",
                     g_max_body);
            return refuse(c, method, url, MHD_HTTP_CONTENT_TOO_LARGE, "RequestEntityTooLarge", msg,
                          true, NULL);
        }
        r->body_len = (size_t)len;
    }
    /* nothing is reserved for an announced length: the body is charged as it arrives */
    r->hold.seq = atomic_fetch_add_explicit(&g_request_seq, 1, memory_order_relaxed);
    r->hold.fd = cc->fd;
    return MHD_YES;
}

/* The request cannot be held now: what it held is given back and the rest of its body is read
 * and dropped as it arrives, then it is answered 503 with Retry-After on a connection that stays
 * open. Answering before the body would close the socket with unread bytes in it, a reset that
 * can swallow the answer. */
static void shed(struct conn_ctx *cc, struct req_ctx *r) {
    r->shed_cost = jg_budget_request_cost(r->body_len);
    r->shed_read = cc->body.len;
    jg_budget_hold_release(&r->hold);
    r->shed_held = jg_budget_held();
    jg_buf_free(&cc->body);
}

/* Room in the body buffer for `need` bytes (and its NUL), charged to the request's hold first:
 * what has arrived and at most as much again (at least BODY_WINDOW), never past Content-Length.
 * False when the budget cannot hold it (the request is shed) or the hold was evicted. */
static bool body_room(struct conn_ctx *cc, struct req_ctx *r, size_t need) {
    if (need + 1 <= cc->body.cap) return true;
    size_t want = cc->body.cap * 2 > need + 1 ? cc->body.cap * 2 : need + 1;
    if (want < BODY_WINDOW) want = BODY_WINDOW;
    if (want > r->body_len + 1) want = r->body_len + 1;
    if (!jg_budget_hold_grow(&r->hold, want, r->body_len <= JG_BUDGET_SMALL_BODY)) return false;
    char *p = jg_realloc(cc->body.data, want);
    if (!p) return false;
    cc->body.data = p;
    cc->body.cap = want;
    return true;
}

static void log_rules(struct jg_log *l, uint64_t rules) {
    jg_buf names = JG_BUF_INIT;
    jg_buf_putc(&names, '[');
    jg_put_rule_names(rules, &names);
    jg_buf_putc(&names, ']');
    if (!names.oom) jg_log_raw(l, "rules", names.data, names.len);
    jg_buf_free(&names);
}

/* One line for the rules of a warn or audit mode that fired (docs/modes.md), with the warnings. */
static void log_notes(const struct jg_outcome *o, const char *msg, uint64_t rules, bool warnings) {
    struct jg_log l;
    if (!rules || !jg_log_begin(&l, JG_LOG_INFO, msg)) return;
    jg_log_request(&l, o);
    log_rules(&l, rules);
    /* an audited request is allowed: the line is the only place its value and message are seen */
    if (!warnings) jg_log_errors(&l, "errors", &o->audit);
    if (warnings) {
        jg_buf list = JG_BUF_INIT;
        jg_buf_putc(&list, '[');
        const char *p = o->warnings.data ? o->warnings.data : "", *end = p + o->warnings.len;
        for (const char *q = p; q < end;) {
            const char *nl = memchr(q, '\n', (size_t)(end - q));
            if (!nl) break;
            if (q != p) jg_buf_putc(&list, ',');
            jg_buf_json_string(&list, q, (size_t)(nl - q));
            q = nl + 1;
        }
        jg_buf_putc(&list, ']');
        if (!list.oom) jg_log_raw(&l, "warnings", list.data, list.len);
        jg_buf_free(&list);
    }
    jg_log_end(&l);
}

static void log_outcome(struct MHD_Connection *c, const struct jg_outcome *o, double secs) {
    enum jg_log_level lvl;
    const char *msg;
    switch (o->verdict) {
    case JG_VERDICT_ALLOWED:
        lvl = JG_LOG_DEBUG, msg = "admission allowed";
        break;
    case JG_VERDICT_DENIED:
        lvl = JG_LOG_INFO, msg = "admission denied";
        break;
    case JG_VERDICT_BAD_REQUEST:
        lvl = JG_LOG_WARN, msg = "admission bad request";
        break;
    default:
        lvl = JG_LOG_ERROR, msg = "admission error";
        break;
    }
    log_notes(o, "admission warning", o->rules_warn, true);
    log_notes(o, "admission audit", o->rules_audit, false);
    struct jg_log l;
    if (!jg_log_begin(&l, lvl, msg)) return;
    jg_log_request(&l, o);
    if (o->verdict != JG_VERDICT_ALLOWED) {
        jg_log_int(&l, "code", o->code);
        log_rules(&l, o->rules);
        jg_log_strn(&l, "message", o->message.data ? o->message.data : "", o->message.len);
        char ip[64];
        client_ip(c, ip, sizeof ip);
        jg_log_str(&l, "remote", ip);
    }
    jg_log_double(&l, "seconds", secs);
    jg_log_end(&l);
}

/* Decides the whole body and queues the answer, handing cc->resp's buffer over to libmicrohttpd;
 * *answer_len: the bytes it holds until the client has read them. */
static enum MHD_Result decide(struct MHD_Connection *c, struct conn_ctx *cc, struct req_ctx *r,
                              size_t *answer_len) {
    struct jg_outcome o;
    jg_outcome_init(&o);
    /* one snapshot decides the whole request; a reload meanwhile frees it only after release */
    const struct jg_snapshot *snap = jg_snapshot_acquire();
    jg_admit(cc->body.data ? cc->body.data : "", cc->body.len, &snap->cfg, &cc->resp, &o);
    jg_snapshot_release(snap);
    enum MHD_Result ret;
    *answer_len = 0;
    if (cc->resp.oom || !cc->resp.data) {
        jg_buf_free(&cc->resp);
        ret = respond(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "application/json", jg_oom_response,
                      strlen(jg_oom_response), BODY_STATIC, true, NULL, NULL);
        jg_metrics_http_response(500);
    } else {
        /* every decided review is HTTP 200, whatever status.code says (controller-runtime) */
        *answer_len = cc->resp.len;
        ret = respond_webhook(c, MHD_HTTP_OK, &cc->resp, false, NULL, NULL);
        jg_metrics_http_response(200);
    }
    double secs = since(&r->start);
    jg_metrics_admission(&o, secs);
    log_outcome(c, &o, secs);
    jg_outcome_free(&o);
    return ret;
}

/* The 503 of a shed request, once its body has been read and dropped. */
static enum MHD_Result answer_shed(struct MHD_Connection *c, const struct req_ctx *r,
                                   const char *method, const char *url) {
    char msg[256];
    snprintf(msg, sizeof msg,
             "jobguard is at its memory budget (%llu of %llu bytes held by requests in "
             "flight; this one needs %llu), retry",
             (unsigned long long)r->shed_held, (unsigned long long)jg_budget_total(),
             (unsigned long long)r->shed_cost);
    return refuse_with(c, method, url, MHD_HTTP_SERVICE_UNAVAILABLE, "ServiceUnavailable", msg,
                       false, NULL, "1");
}

static enum MHD_Result on_webhook(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls) {
    (void)cls, (void)version;
    struct conn_ctx *cc = conn_of(c);
    struct req_ctx *r = *con_cls;
    if (!cc || !r) return MHD_NO;
    if (!r->started) {
        r->started = true;
        r->in_flight = true;
        jg_metrics_in_flight(1);
        jg_buf_free(&cc->body); /* the body's buffer is charged from its first byte */
        atomic_store(&cc->request_since_ms, now_ms());
        atomic_store(&cc->waiting_since_ms, -1);
        return validate_headers(c, cc, r, url, method);
    }
    if (*upload_size > 0) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (g_cfg.connection_timeout_s && since(&r->start) > g_cfg.connection_timeout_s)
            return MHD_NO; /* a body trickled slower than the deadline: close, no answer */
        if (!r->shed_cost && cc->body.len + n <= r->body_len &&
            !body_room(cc, r, cc->body.len + n)) {
            if (jg_budget_hold_evicted(&r->hold))
                return MHD_NO; /* a newer review needed its bytes */
            shed(cc, r);
        }
        if (r->shed_cost) {
            r->shed_read += n;
            return r->shed_read > r->body_len ? MHD_NO : MHD_YES;
        }
        /* Content-Length was checked against the limit and libmicrohttpd frames the body by it */
        if (cc->body.len + n > r->body_len) return MHD_NO;
        jg_buf_put(&cc->body, upload, n);
        if (cc->body.oom) return MHD_NO;
        return MHD_YES;
    }
    if (jg_budget_hold_evicted(&r->hold)) return MHD_NO;
    if (r->shed_cost) return answer_shed(c, r, method, url);
    if (cc->body.len == 0)
        return refuse(c, method, url, MHD_HTTP_BAD_REQUEST, "BadRequest", "request body is empty",
                      false, NULL);
    /* the body is whole: reserve its decision */
    uint64_t cost = 0;
    if (jg_budget_take(r->body_len, &cost) != JG_BUDGET_TAKEN) {
        shed(cc, r);
        return answer_shed(c, r, method, url);
    }
    r->reserved = cost;
    size_t answer_len;
    enum MHD_Result ret = decide(c, cc, r, &answer_len);
    /* libmicrohttpd holds the answer until it is sent: that is all the request holds now, for as
     * long as its client takes to read it */
    jg_budget_hold_set(&r->hold, answer_len);
    jg_budget_give(r->body_len, cost);
    r->reserved = 0;
    jg_buf_free(&cc->body);
    return ret;
}

/* The request target as received, before libmicrohttpd decodes it in place: "%00" would make
 * "/validate%00x" route as "/validate", and control characters or spaces have no place in it. */
static const char *bad_target(const char *uri) {
    for (const char *p = uri; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch <= 0x20 || ch == 0x7f) return "invalid character in the request target";
        if (ch == '%' && p[1] == '0' && p[2] == '0') return "%00 in the request target";
    }
    return NULL;
}

/* MHD_OPTION_URI_LOG_CALLBACK: the request line has arrived; its context starts here, so that
 * the completion callback also sees requests libmicrohttpd refuses itself. */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *c) {
    (void)cls;
    struct req_ctx *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    clock_gettime(CLOCK_MONOTONIC, &r->start);
    r->bad_target = bad_target(uri);
    struct conn_ctx *cc = conn_of(c);
    if (cc) atomic_store(&cc->handshaken, true); /* a request line comes after the handshake */
    return r;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls, (void)toe;
    struct req_ctx *r = *con_cls;
    if (!r) return;
    if (r->in_flight) jg_metrics_in_flight(-1);
    if (r->reserved) jg_budget_give(r->body_len, r->reserved);
    jg_budget_hold_release(&r->hold);
    struct conn_ctx *cc = conn_of(c);
    if (cc) atomic_store(&cc->waiting_since_ms, now_ms());
    /* An idle keep-alive connection holds no buffer of ours: with a pool of API-server
     * connections that matters more than one malloc per request (the response's buffer went to
     * libmicrohttpd). */
    if (cc) {
        jg_buf_free(&cc->body);
        jg_buf_free(&cc->resp);
    }
    free(r);
    *con_cls = NULL;
}

/* GnuTLS hook: a handshake message has been sent or received; the client's Finished ends its
 * handshake (TLS 1.2 and 1.3 alike). */
static int handshake_hook(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                          const gnutls_datum_t *msg) {
    (void)when, (void)msg;
    if (htype != GNUTLS_HANDSHAKE_FINISHED || !incoming) return 0;
    struct MHD_Connection *c = gnutls_session_get_ptr(s); /* libmicrohttpd's own pointer */
    struct conn_ctx *cc = c ? conn_of(c) : NULL;
    if (cc) atomic_store(&cc->handshaken, true);
    return 0;
}

/* GnuTLS's reads of a webhook connection. Until the client's Finished has arrived, at most
 * JG_TLS_MAX_HANDSHAKE_BYTES are read: GnuTLS buffers a whole handshake message before it looks
 * at it (its own maximum, gnutls_handshake_set_max_packet_length, is checked only once the
 * message is complete), so a ClientHello announcing 16 MiB would otherwise be held whole. */
static ssize_t tls_pull(gnutls_transport_ptr_t p, void *buf, size_t n) {
    struct conn_ctx *cc = p;
    bool handshaking = !atomic_load(&cc->handshaken);
    if (handshaking) {
        if (cc->handshake_read >= JG_TLS_MAX_HANDSHAKE_BYTES) {
            errno = EMSGSIZE; /* a fatal pull error: libmicrohttpd closes the connection */
            return -1;
        }
        if (n > JG_TLS_MAX_HANDSHAKE_BYTES - cc->handshake_read)
            n = JG_TLS_MAX_HANDSHAKE_BYTES - cc->handshake_read;
    }
    ssize_t got = recv(cc->fd, buf, n, 0);
    if (got > 0 && handshaking) cc->handshake_read += (size_t)got;
    return got;
}

static int tls_pull_timeout(gnutls_transport_ptr_t p, unsigned ms) {
    struct conn_ctx *cc = p;
    struct pollfd pfd = {.fd = cc->fd, .events = POLLIN};
    return poll(&pfd, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)ms);
}

/* The TLS session of a new webhook connection, before its first byte is read. */
static void bound_handshake(struct MHD_Connection *c, struct conn_ctx *cc) {
    const union MHD_ConnectionInfo *ti =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ti || !ti->tls_session) return;
    gnutls_session_t s = ti->tls_session;
    /* reads through tls_pull; writes still go to the socket, as libmicrohttpd set them */
    gnutls_transport_set_ptr2(s, cc, (gnutls_transport_ptr_t)(intptr_t)cc->fd);
    gnutls_transport_set_pull_function(s, tls_pull);
    gnutls_transport_set_pull_timeout_function(s, tls_pull_timeout);
    gnutls_handshake_set_hook_function(s, GNUTLS_HANDSHAKE_FINISHED, GNUTLS_HOOK_POST,
                                       handshake_hook);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        struct conn_ctx *cc = calloc(1, sizeof *cc);
        *socket_context = cc;
        if (!cc) return;
        cc->ops = cls == &g_ops_port;
        cc->deadline_ms =
            cc->ops ? OPS_REQUEST_DEADLINE_S * 1000 : (int64_t)g_cfg.connection_timeout_s * 1000;
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        cc->fd = ci ? ci->connect_fd : MHD_INVALID_SOCKET;
        cc->started_ms = now_ms();
        atomic_store(&cc->handshaken, cc->ops || cc->fd == MHD_INVALID_SOCKET);
        if (!cc->ops && cc->fd != MHD_INVALID_SOCKET) bound_handshake(c, cc);
        atomic_store(&cc->waiting_since_ms, cc->fd == MHD_INVALID_SOCKET ? -1 : cc->started_ms);
        pthread_mutex_lock(&g_conns_lock);
        cc->next = g_conns;
        if (g_conns) g_conns->prev = cc;
        g_conns = cc;
        g_live[cc->ops]++;
        if (cc->fd == MHD_INVALID_SOCKET)
            cc->cut = true, g_live[cc->ops]--; /* never watched, never evicted */
        else
            make_room(cc, cc->ops ? OPS_MAX_CONNECTIONS : g_cfg.max_connections);
        pthread_mutex_unlock(&g_conns_lock);
    } else if (*socket_context) {
        struct conn_ctx *cc = *socket_context;
        pthread_mutex_lock(&g_conns_lock); /* before libmicrohttpd closes the socket */
        if (cc->prev)
            cc->prev->next = cc->next;
        else
            g_conns = cc->next;
        if (cc->next) cc->next->prev = cc->prev;
        if (!cc->cut) g_live[cc->ops]--;
        pthread_mutex_unlock(&g_conns_lock);
        jg_buf_free(&cc->body);
        jg_buf_free(&cc->resp);
        free(cc);
        *socket_context = NULL;
    }
}

/* What libmicrohttpd logs when it answers a request itself (a malformed Content-Length, a header
 * line without a colon, a pool too small for the headers): it never reaches a handler, so its
 * code is taken from this message, to be counted and logged like every other answer. */
static const char MHD_REFUSAL[] = "Error processing request (HTTP response code is %u ('%s')).";

/* libmicrohttpd's own messages: its refusals at warn level (counted on the webhook port, cls
 * NULL); the rest (handshake failures of probes and scanners, ...) at debug level. */
static void mhd_logger(void *cls, const char *fmt, va_list ap) {
    if (strncmp(fmt, MHD_REFUSAL, sizeof MHD_REFUSAL - 1) == 0) {
        va_list aq;
        va_copy(aq, ap);
        unsigned code = va_arg(aq, unsigned);
        const char *body = va_arg(aq, const char *);
        va_end(aq);
        if (cls != &g_ops_port) jg_metrics_http_response(code);
        struct jg_log l;
        if (jg_log_begin(&l, JG_LOG_WARN, "request refused by libmicrohttpd")) {
            jg_log_uint(&l, "code", code);
            jg_log_str(&l, "port", cls == &g_ops_port ? "ops" : "webhook");
            /* one of libmicrohttpd's own NUL-terminated pages; cut past JG_LOG_MAX_VALUE */
            jg_log_str(&l, "reason", body);
            jg_log_end(&l);
        }
        return;
    }
    if (!jg_log_enabled(JG_LOG_DEBUG)) return;
    char buf[1024];
    jg_vformat_cut(buf, sizeof buf, fmt, ap);
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    struct jg_log l;
    if (jg_log_begin(&l, JG_LOG_DEBUG, "libmicrohttpd")) {
        jg_log_str(&l, "detail", buf);
        jg_log_end(&l);
    }
}

/* respond() on the ops port: plain text; 405 names the methods it takes. */
static enum MHD_Result ops_respond(struct MHD_Connection *c, unsigned code, const char *body,
                                   size_t len, enum body_kind kind, bool close) {
    return respond(c, code, "text/plain; charset=utf-8", body, len, kind, close,
                   code == MHD_HTTP_METHOD_NOT_ALLOWED ? "GET, HEAD" : NULL, NULL);
}
#define OPS_TEXT(c, code, lit) ops_respond(c, code, lit, sizeof lit - 1, BODY_STATIC, false)

static enum MHD_Result on_ops(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls) {
    (void)cls, (void)version, (void)upload;
    struct req_ctx *r = *con_cls;
    if (!r) return MHD_NO;
    if (!r->started) { /* headers: refuse what the webhook port refuses, else read on */
        r->started = true;
        const char *why = r->bad_target;
        unsigned code = why ? MHD_HTTP_BAD_REQUEST : check_request_framing(c, method, &why);
        if (!code) return MHD_YES;
        char msg[160];
        int n = snprintf(msg, sizeof msg, "%s\n", why);
        struct jg_log l;
        if (jg_log_begin(&l, JG_LOG_WARN, "ops request refused")) {
            jg_log_uint(&l, "code", code);
            jg_log_str(&l, "reason", why);
            jg_log_str(&l, "path", url);
            jg_log_end(&l);
        }
        return ops_respond(c, code, msg, (size_t)n, BODY_COPY, true);
    }
    if (*upload_size) { /* bodies are ignored */
        *upload_size = 0;
        return MHD_YES;
    }
    bool known =
        strcmp(url, "/healthz") == 0 || strcmp(url, "/readyz") == 0 || strcmp(url, "/metrics") == 0;
    if (!known) return OPS_TEXT(c, MHD_HTTP_NOT_FOUND, "not found\n");
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return OPS_TEXT(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    if (strcmp(url, "/healthz") == 0) return OPS_TEXT(c, MHD_HTTP_OK, "ok\n");
    if (strcmp(url, "/readyz") == 0) {
        if (atomic_load(&g_draining))
            return OPS_TEXT(c, MHD_HTTP_SERVICE_UNAVAILABLE, "shutting down\n");
        if (!jg_tls_valid_now())
            return OPS_TEXT(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no valid certificate\n");
        return OPS_TEXT(c, MHD_HTTP_OK, "ok\n");
    }
    jg_buf b = JG_BUF_INIT;
    jg_metrics_render(&b);
    if (b.oom) {
        jg_buf_free(&b);
        return MHD_NO;
    }
    return respond(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", b.data, b.len,
                   BODY_HANDED, false, NULL, NULL);
}

/* sockaddr for --bind-address (IPv4 or IPv6 literal). */
static bool make_addr(const char *host, uint16_t port, struct sockaddr_storage *ss, bool *v6) {
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(port);
        *v6 = false;
        return true;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        *v6 = true;
        return true;
    }
    return false;
}

/* Why libmicrohttpd could not listen on addr, when the reason is the socket's: a bind made the
 * way it makes it (SO_REUSEADDR) fails with the same errno ("Address already in use"). NULL when a
 * bind succeeds, so the fault is elsewhere. */
static const char *bind_error(const struct sockaddr_storage *addr, bool v6) {
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return strerror(errno);
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    int rc = bind(fd, (const struct sockaddr *)addr,
                  v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
    int e = errno;
    close(fd);
    return rc == 0 ? NULL : strerror(e);
}

bool jg_transport_start(const struct jg_server_config *cfg, char *err, size_t errlen) {
    g_cfg = *cfg;
    jg_budget_init(cfg->memory_budget);
    g_max_body = jg_budget_max_body();
    atomic_store(&g_draining, false);
    atomic_store(&g_closing, false);
    struct sockaddr_storage addr, ops_addr;
    bool v6;
    bool ops_v6;
    if (!make_addr(cfg->bind_address, cfg->port, &addr, &v6)) {
        jg_format_cut(err, errlen, "--bind-address %s is not an IPv4 or IPv6 address",
                      cfg->bind_address);
        return false;
    }
    if (!make_addr(cfg->ops_bind_address, cfg->ops_port, &ops_addr, &ops_v6)) {
        jg_format_cut(err, errlen, "--ops-bind-address %s is not an IPv4 or IPv6 address",
                      cfg->ops_bind_address);
        return false;
    }
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    /* Options passed as varargs: the certificate callback is a function pointer, which
     * MHD_OptionItem.ptr_value cannot carry portably. */
    /* mTLS trust, only when asked for: an option array that is empty otherwise */
    struct MHD_OptionItem trust[] = {
        {cfg->client_ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0,
         (void *)(uintptr_t)cfg->client_ca_pem},
        {MHD_OPTION_END, 0, NULL},
    };
    g_tls = MHD_start_daemon(
        flags | MHD_USE_TLS | (v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, on_webhook, NULL,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL, MHD_OPTION_SOCK_ADDR, &addr,
        MHD_OPTION_THREAD_POOL_SIZE, cfg->threads, MHD_OPTION_CONNECTION_LIMIT,
        cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, cfg->connection_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, cfg->connection_memory_limit,
        MHD_OPTION_HTTPS_PRIORITIES, cfg->tls_priorities, MHD_OPTION_HTTPS_CERT_CALLBACK,
        jg_tls_cert_callback, MHD_OPTION_ARRAY, trust, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
        NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL, MHD_OPTION_URI_LOG_CALLBACK,
        uri_seen, NULL, MHD_OPTION_STRICT_FOR_CLIENT, 0, MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1,
        MHD_OPTION_END);
    if (!g_tls) {
        const char *why = bind_error(&addr, v6);
        if (why)
            jg_format_cut(err, errlen, "cannot listen on %s port %u: %s", cfg->bind_address,
                          cfg->port, why);
        else
            jg_format_cut(err, errlen,
                          "cannot start the HTTPS listener on %s port %u (bad TLS priorities "
                          "\"%s\", or bad client CA); run with --log-level debug for "
                          "libmicrohttpd's reason",
                          cfg->bind_address, cfg->port, cfg->tls_priorities);
        return false;
    }
    g_ops = MHD_start_daemon(
        flags | (ops_v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, on_ops, NULL,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, (void *)(uintptr_t)&g_ops_port,
        MHD_OPTION_SOCK_ADDR, &ops_addr, MHD_OPTION_CONNECTION_LIMIT, OPS_MAX_CONNECTIONS,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, OPS_MAX_CONNECTIONS_PER_IP,
        MHD_OPTION_CONNECTION_TIMEOUT, OPS_TIMEOUT_S, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        (void *)(uintptr_t)&g_ops_port, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
        MHD_OPTION_URI_LOG_CALLBACK, uri_seen, NULL, MHD_OPTION_STRICT_FOR_CLIENT, 0,
        MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1, MHD_OPTION_END);
    if (!g_ops) {
        MHD_stop_daemon(g_tls);
        g_tls = NULL;
        const char *why = bind_error(&ops_addr, ops_v6);
        jg_format_cut(err, errlen, "cannot listen on %s port %u (ops): %s", cfg->ops_bind_address,
                      cfg->ops_port, why ? why : "libmicrohttpd refused to start the listener");
        return false;
    }
    atomic_store(&g_watchdog_stop, false);
    g_watchdog_running = pthread_create(&g_watchdog, NULL, watchdog, NULL) == 0;
    return true;
}

void jg_transport_set_draining(void) {
    atomic_store(&g_draining, true);
}

void jg_transport_quiesce(void) {
    atomic_store(&g_closing, true);
    if (!g_tls) return;
    MHD_socket fd = MHD_quiesce_daemon(g_tls);
    if (fd != MHD_INVALID_SOCKET) close(fd);
}

unsigned jg_transport_connections(void) {
    if (!g_tls) return 0;
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(g_tls, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return i ? i->num_connections : 0;
}

void jg_transport_stop(void) {
    if (g_watchdog_running) {
        atomic_store(&g_watchdog_stop, true);
        pthread_join(g_watchdog, NULL);
        g_watchdog_running = false;
    }
    if (g_tls) MHD_stop_daemon(g_tls);
    if (g_ops) MHD_stop_daemon(g_ops);
    g_tls = g_ops = NULL;
}
