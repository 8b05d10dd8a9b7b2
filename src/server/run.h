/* run: the server's life: signals (a dedicated sigwait thread), the certificate watcher, the
 * daemons, and the graceful shutdown sequence. */
#ifndef JOBGUARD_SERVER_RUN_H
#define JOBGUARD_SERVER_RUN_H

#include "transport.h"

/* Blocks SIGTERM/SIGINT/SIGHUP in every thread, starts everything, serves until SIGTERM or SIGINT,
 * then: /readyz 503 at once, keep serving for shutdown_delay_s (a second signal cuts it short),
 * stop accepting and close keep-alive connections after their next response, wait up to
 * drain_timeout_s for open connections, stop. SIGHUP re-reads the certificate. The certificate
 * watcher is told to stop at the first signal and waited for until shutdown_delay_s +
 * drain_timeout_s after it (at least 0.2 s); if it is still busy then (a stalled filesystem), the
 * process exits without it. The certificate must already be loaded (jg_tls_init). Returns the
 * exit code: 0 after a clean shutdown. */
int jg_server_run(const struct jg_server_config *cfg);

#endif
