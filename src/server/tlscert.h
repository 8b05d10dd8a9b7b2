/* tlscert: the serving certificate. OpenSSL checks every pair before it is served (key matches,
 * validity window, service DNS name, and what kube-apiserver's Go TLS client requires: names in
 * subjectAltName, serverAuth along the chain, a key and keyUsage that can sign the handshake),
 * in the server process: at startup on the main thread, then on the file watcher's thread
 * (watch.h); GnuTLS objects built from it are handed to libmicrohttpd per handshake by
 * jg_tls_cert_callback. The pair is reloaded when the files change (poll), on request (SIGHUP)
 * or when a pair refused as not valid yet reaches its notBefore, swapping an atomic pointer; old
 * pairs stay allocated for a grace period because a handshake that already fetched them may still
 * be signing with them. Files are read with jg_read_regular_file: a FIFO or device at the path is
 * refused, never waited on. */
#ifndef JOBGUARD_SERVER_TLSCERT_H
#define JOBGUARD_SERVER_TLSCERT_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "jobguard/buf.h"

#define JG_TLS_MAX_PEM_BYTES (1u << 20) /* a cert chain or key file; real ones are a few KiB */
#define JG_TLS_MAX_CHAIN 16             /* certificates in tls.crt (leaf + intermediates) */

struct jg_tls_settings {
    const char *cert_file;
    const char *key_file;
    const char *service_name; /* NULL or "": no DNS name check */
    unsigned poll_interval_s; /* the watcher's; 0: reload only on request (SIGHUP) */
    unsigned grace_s;         /* keep a replaced pair at least this long */
};

/* Loads and checks the first pair and adds it to the file watcher's list (watch.h) with the poll
 * interval. On failure returns false with a precise reason in err. */
bool jg_tls_init(const struct jg_tls_settings *s, char *err, size_t errlen);

/* For MHD_OPTION_HTTPS_CERT_CALLBACK (gnutls_certificate_retrieve_function2). */
int jg_tls_cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                         const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                         gnutls_pcert_st **pcert, unsigned int *pcert_length,
                         gnutls_privkey_t *privkey);

/* The current pair is inside its validity window. */
bool jg_tls_valid_now(void);

/* Frees every pair. Call after the TLS daemon and the watcher are stopped. */
void jg_tls_cleanup(void);

/* Reads and checks a PEM bundle of CA certificates for client authentication (at least one
 * certificate, all parsable). */
bool jg_tls_read_ca_bundle(const char *path, jg_buf *pem, char *err, size_t errlen);

/* mTLS: the peer of `session` presented a certificate that chains to the trusted client CA, is
 * valid now and usable for client auth, and (if cn is non-empty) has that common name. */
bool jg_tls_verify_client(void *session, const char *cn, char *reason, size_t n);

#endif
