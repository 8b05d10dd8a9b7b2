/* bare_https: the floor under jobguard's HTTPS path. libmicrohttpd + GnuTLS with the daemon options
 * jobguard serve uses (one pool thread, epoll, the same connection limits, memory pool and TLS
 * priorities), a handler that reads the whole body and answers a fixed AdmissionReview — no
 * decoding, no rules, no metrics, no logging. bench/https/run.sh runs it beside jobguard and nginx.
 *
 *   bare_https CERT KEY PORT RESPONSE-FILE
 * Listens on 127.0.0.1:PORT until SIGTERM/SIGINT. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>

#include <microhttpd.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = NULL;
    size_t n = 0, cap = 0, r;
    do {
        if (cap - n < 65536) {
            char *nb = realloc(b, cap = cap * 2 + 65536);
            if (!nb) break;
            b = nb;
        }
        r = fread(b + n, 1, cap - n - 1, f);
        n += r;
    } while (r > 0);
    fclose(f);
    if (b) b[n] = '\0';
    *len = n;
    return b;
}

static const char *g_resp;
static size_t g_resp_len;

struct body {
    size_t n; /* bytes read; the content itself is dropped, as a fixed answer needs none of it */
};

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state) {
    (void)cls, (void)url, (void)method, (void)version, (void)data;
    struct body *b = *state;
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b) return MHD_NO;
        *state = b;
        return MHD_YES;
    }
    if (*size) {
        b->n += *size;
        *size = 0;
        return MHD_YES;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(g_resp_len, (void *)(uintptr_t)g_resp,
                                                             MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state,
                         enum MHD_RequestTerminationCode code) {
    (void)cls, (void)c, (void)code;
    free(*state);
    *state = NULL;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: bare_https CERT KEY PORT RESPONSE-FILE\n");
        return 2;
    }
    size_t cl, kl;
    char *cert = slurp(argv[1], &cl), *key = slurp(argv[2], &kl);
    char *resp = slurp(argv[4], &g_resp_len);
    int port = atoi(argv[3]);
    if (!cert || !key || !resp || port <= 0 || port > 65535) {
        fprintf(stderr, "bare_https: cannot read %s, %s or %s, or bad port %s\n", argv[1], argv[2],
                argv[4], argv[3]);
        return 2;
    }
    g_resp = resp;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* the daemon's threads inherit it */
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* jobguard serve --threads 1 defaults: 16 KiB pool per connection, TLS 1.2 and 1.3. */
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_TLS, 0, NULL, NULL,
        on_request, NULL, MHD_OPTION_SOCK_ADDR, &a, MHD_OPTION_THREAD_POOL_SIZE, 1,
        MHD_OPTION_CONNECTION_LIMIT, 2048, MHD_OPTION_CONNECTION_TIMEOUT, 30,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384, MHD_OPTION_HTTPS_PRIORITIES,
        "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2", MHD_OPTION_HTTPS_MEM_CERT, cert,
        MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
        MHD_OPTION_STRICT_FOR_CLIENT, 0, MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "bare_https: cannot listen on 127.0.0.1:%d\n", port);
        return 1;
    }
    sigdelset(&set, SIGPIPE);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    free(cert), free(key), free(resp);
    return 0;
}
