/* transport: the two libmicrohttpd daemons. The TLS port serves POST /validate (the engine's
 * jg_admit behind HTTP checks and limits); the ops port serves /healthz, /readyz and /metrics in
 * plain HTTP. Shutdown is driven from outside in steps: draining (readyz 503), quiesce (stop
 * accepting, Connection: close on every further response), drain (wait for connections), stop. */
#ifndef JOBGUARD_SERVER_TRANSPORT_H
#define JOBGUARD_SERVER_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobguard/rules.h"

struct jg_server_config {
    const char *bind_address, *ops_bind_address;
    uint16_t port, ops_port;
    unsigned threads;                /* MHD thread pool size (> 0) */
    unsigned max_connections;        /* MHD_OPTION_CONNECTION_LIMIT */
    unsigned max_connections_per_ip; /* 0: unlimited */
    unsigned connection_timeout_s;   /* idle timeout, 0: none */
    size_t connection_memory_limit;  /* MHD per-connection pool (headers and read buffer) */
    size_t max_header_bytes;         /* request line + headers, else 431 */
    const char *tls_priorities;      /* GnuTLS priority string */
    const char *client_ca_pem;       /* NULL: no client authentication */
    const char *client_cn;           /* NULL or "": any CN signed by the client CA */
    unsigned shutdown_delay_s, drain_timeout_s;
    uint64_t memory_budget; /* bytes requests in flight may hold (server/budget.h) */
    struct jg_config engine;
};

/* Starts both daemons. On failure returns false with the reason in err (nothing left running). */
bool jg_transport_start(const struct jg_server_config *cfg, char *err, size_t errlen);

void jg_transport_set_draining(void);    /* /readyz answers 503 from now on */
void jg_transport_quiesce(void);         /* stop accepting; responses carry Connection: close */
unsigned jg_transport_connections(void); /* open connections of the TLS daemon */
void jg_transport_stop(void);            /* closes everything that is left */

#endif
