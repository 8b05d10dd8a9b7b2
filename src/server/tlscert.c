/* tlscert: check with OpenSSL, serve with GnuTLS, swap atomically on change (the watcher,
 * watch.c, looks at the files). */
#include "tlscert.h"

#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "jobguard/readfile.h"
#include "jobguard/server/log.h"
#include "metrics.h"
#include "watch.h"

struct pair {
    gnutls_pcert_st pcert[JG_TLS_MAX_CHAIN];
    unsigned n_pcert;
    gnutls_privkey_t key;
    int64_t not_before, not_after;
    unsigned char digest[32]; /* SHA-256 of cert bytes || key bytes */
    char serial[80];
    char subject[256];
    struct pair *next_retired;
    int64_t retired_at;
};

static struct jg_tls_settings g_set;
static _Atomic(struct pair *) g_current;
static struct pair *g_retired; /* watcher thread only (and cleanup) */
static unsigned g_pair_reads;  /* load_pair calls (the watcher's, and start-up's) */
static struct jg_file_sig g_sig[2];
static unsigned char g_failed_digest[32];
static bool g_have_failed;
static bool g_retry; /* the last load could not read a file: try again even if unchanged */
/* The last load was refused only because a certificate is not valid yet: its notBefore (Unix
 * time, 0: none). The same files are tried again once it has passed. Watcher thread only. */
static int64_t g_retry_at;

static void fmt(char *err, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *err, size_t n, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    jg_vformat_cut(err, n, f, ap); /* a long path or name: cut with the marker, not silently */
    va_end(ap);
}

/* The first queued OpenSSL error as text (and the queue cleared), for precise messages. */
static const char *ssl_reason(char *buf, size_t n) {
    unsigned long e = ERR_get_error();
    if (e == 0)
        snprintf(buf, n, "no detail");
    else
        ERR_error_string_n(e, buf, n);
    ERR_clear_error();
    return buf;
}

static int64_t asn1_to_unix(const ASN1_TIME *t) {
    struct tm tm;
    if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return 0;
    return (int64_t)timegm(&tm);
}

static void put_utc(char *buf, size_t n, int64_t t) {
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* "a, b" (the DNS names) of the certificate, for the service-name error; a list longer than buf
 * ends in the truncation marker. */
static void san_list(X509 *x, char *buf, size_t n) {
    GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    if (!names) {
        snprintf(buf, n, "none");
        return;
    }
    jg_buf list = JG_BUF_INIT;
    for (int i = 0; i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
        if (g->type != GEN_DNS) continue;
        if (list.len) jg_buf_put(&list, ", ", 2);
        jg_buf_put(&list, (const char *)ASN1_STRING_get0_data(g->d.dNSName),
                   (size_t)ASN1_STRING_length(g->d.dNSName));
    }
    if (list.oom)
        snprintf(buf, n, "out of memory");
    else if (list.len == 0)
        snprintf(buf, n, "no DNS names");
    else
        jg_copy_cut(buf, n, list.data, list.len);
    jg_buf_free(&list);
    GENERAL_NAMES_free(names);
}

/* The subject in OpenSSL's one-line form (/CN=...), cut with the marker when longer than buf. */
static void subject_text(X509 *x, char *buf, size_t n) {
    char *full = X509_NAME_oneline(X509_get_subject_name(x), NULL, 0);
    jg_copy_cut(buf, n, full ? full : "?", full ? strlen(full) : 1);
    OPENSSL_free(full);
}

/* The subject's Common Name as its bytes, cut the same way ("" without one). */
static void common_name(X509 *x, char *buf, size_t n) {
    const X509_NAME *name = X509_get_subject_name(x);
    int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
    const ASN1_STRING *d = i < 0 ? NULL : X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    jg_copy_cut(buf, n, d ? (const char *)ASN1_STRING_get0_data(d) : "",
                d ? (size_t)ASN1_STRING_length(d) : 0);
}

/* "the leaf" or "intermediate N (/CN=...)": which certificate of tls.crt a message is about. */
static const char *cert_label(X509 *x, int i, char *buf, size_t n) {
    if (i == 0) return "the leaf";
    char subj[200];
    subject_text(x, subj, sizeof subj);
    jg_format_cut(buf, n, "intermediate %d (%s)", i, subj);
    return buf;
}

/* "clientAuth, codeSigning" (names OpenSSL knows, dotted OIDs otherwise); *server: the list
 * allows TLS server authentication, as Go's x509.Verify requires (serverAuth or
 * anyExtendedKeyUsage). */
static void eku_list(const EXTENDED_KEY_USAGE *eku, char *buf, size_t n, bool *server) {
    jg_buf list = JG_BUF_INIT;
    *server = false;
    for (int i = 0; i < sk_ASN1_OBJECT_num(eku); i++) {
        const ASN1_OBJECT *o = sk_ASN1_OBJECT_value(eku, i);
        int nid = OBJ_obj2nid(o);
        if (nid == NID_server_auth || nid == NID_anyExtendedKeyUsage) *server = true;
        if (list.len) jg_buf_put(&list, ", ", 2);
        if (nid != NID_undef) {
            jg_buf_puts(&list, OBJ_nid2sn(nid));
            continue;
        }
        int len = OBJ_obj2txt(NULL, 0, o, 1); /* a dotted OID has no length bound */
        if (len > 0 && jg_buf_reserve(&list, (size_t)len)) {
            OBJ_obj2txt(list.data + list.len, len + 1, o, 1);
            list.len += (size_t)len;
        }
    }
    if (list.oom)
        snprintf(buf, n, "out of memory");
    else
        jg_copy_cut(buf, n, list.data ? list.data : "", list.len);
    jg_buf_free(&list);
}

/* The extended key usage of certificate i allows a TLS server (or there is none). */
static bool check_eku(X509 *x, int i, char *err, size_t n) {
    if (X509_get_ext_by_NID(x, NID_ext_key_usage, -1) < 0) return true;
    char label[256], list[256];
    EXTENDED_KEY_USAGE *eku = X509_get_ext_d2i(x, NID_ext_key_usage, NULL, NULL);
    if (!eku) {
        fmt(err, n, "certificate %s: the extended key usage of %s cannot be parsed",
            g_set.cert_file, cert_label(x, i, label, sizeof label));
        return false;
    }
    bool server;
    eku_list(eku, list, sizeof list, &server);
    EXTENDED_KEY_USAGE_free(eku);
    if (server) return true;
    fmt(err, n,
        "certificate %s: %s has extended key usage %s without serverAuth: Go TLS clients such "
        "as kube-apiserver refuse the chain",
        g_set.cert_file, cert_label(x, i, label, sizeof label), list);
    return false;
}

/* "keyEncipherment, keyAgreement": the keyUsage bits set (X509_get_key_usage flags). */
static void ku_list(uint32_t ku, char *buf, size_t n) {
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {{KU_DIGITAL_SIGNATURE, "digitalSignature"},
                 {KU_NON_REPUDIATION, "nonRepudiation"},
                 {KU_KEY_ENCIPHERMENT, "keyEncipherment"},
                 {KU_DATA_ENCIPHERMENT, "dataEncipherment"},
                 {KU_KEY_AGREEMENT, "keyAgreement"},
                 {KU_KEY_CERT_SIGN, "keyCertSign"},
                 {KU_CRL_SIGN, "cRLSign"},
                 {KU_ENCIPHER_ONLY, "encipherOnly"},
                 {KU_DECIPHER_ONLY, "decipherOnly"}};
    size_t used = 0;
    snprintf(buf, n, "none");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(ku & names[i].bit)) continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", names[i].name);
        if (w < 0 || (size_t)w >= n - used) break;
        used += (size_t)w;
    }
}

/* Key types Go's crypto/tls client accepts from a server (anything else fails its handshake). */
static bool check_key_type(EVP_PKEY *k, char *err, size_t n) {
    char curve[64] = "", what[96];
    int id = EVP_PKEY_get_base_id(k);
    if (id == EVP_PKEY_RSA || id == EVP_PKEY_ED25519) return true;
    if (id == EVP_PKEY_EC) {
        if (EVP_PKEY_get_group_name(k, curve, sizeof curve, NULL) == 1 &&
            (strcmp(curve, "prime256v1") == 0 || strcmp(curve, "secp384r1") == 0 ||
             strcmp(curve, "secp521r1") == 0))
            return true;
        snprintf(what, sizeof what, "ECDSA key on curve %s", curve[0] ? curve : "(unnamed)");
    } else {
        const char *name = EVP_PKEY_get0_type_name(k);
        snprintf(what, sizeof what, "%s key", name ? name : "unknown");
    }
    fmt(err, n,
        "certificate %s: its %s cannot serve Go TLS clients such as kube-apiserver (RSA, ECDSA "
        "P-256/P-384/P-521 or Ed25519 keys only)",
        g_set.cert_file, what);
    return false;
}

/* Certificate i is inside its validity window; *not_yet: its notBefore when it is in the future. */
static bool check_dates(X509 *x, int i, int64_t *not_yet, char *err, size_t n) {
    char when[32], label[256];
    if (X509_cmp_current_time(X509_get0_notBefore(x)) >= 0) {
        *not_yet = asn1_to_unix(X509_get0_notBefore(x));
        put_utc(when, sizeof when, *not_yet);
        if (i == 0)
            fmt(err, n, "certificate %s is not valid yet: notBefore %s", g_set.cert_file, when);
        else
            fmt(err, n, "certificate %s: %s is not valid yet: notBefore %s", g_set.cert_file,
                cert_label(x, i, label, sizeof label), when);
        return false;
    }
    if (X509_cmp_current_time(X509_get0_notAfter(x)) <= 0) {
        put_utc(when, sizeof when, asn1_to_unix(X509_get0_notAfter(x)));
        if (i == 0)
            fmt(err, n, "certificate %s has expired: notAfter %s", g_set.cert_file, when);
        else
            fmt(err, n, "certificate %s: %s has expired: notAfter %s", g_set.cert_file,
                cert_label(x, i, label, sizeof label), when);
        return false;
    }
    return true;
}

/* Certificate i of the chain as Go's x509.Verify sees it: no SHA-1/MD5 signature (a self-signed
 * one's is never checked), and an intermediate is a CA allowed to sign the one before it. */
static bool check_chain_link(STACK_OF(X509) * chain, int i, char *err, size_t n) {
    X509 *x = sk_X509_value(chain, i);
    char label[256], plabel[256];
    int mdnid = NID_undef, pknid = NID_undef;
    if (X509_self_signed(x, 0) != 1 &&
        OBJ_find_sigid_algs(X509_get_signature_nid(x), &mdnid, &pknid) == 1 &&
        (mdnid == NID_sha1 || mdnid == NID_md5 || mdnid == NID_md5_sha1)) {
        fmt(err, n,
            "certificate %s: %s is signed with %s: Go TLS clients such as kube-apiserver refuse "
            "SHA-1 and MD5 signatures",
            g_set.cert_file, cert_label(x, i, label, sizeof label),
            OBJ_nid2ln(X509_get_signature_nid(x)));
        return false;
    }
    if (i == 0) return true;
    X509 *child = sk_X509_value(chain, i - 1);
    cert_label(x, i, label, sizeof label);
    if (!(X509_get_extension_flags(x) & EXFLAG_CA)) {
        fmt(err, n,
            "certificate %s: %s is not a CA (no basicConstraints CA:TRUE), so it cannot sign %s",
            g_set.cert_file, label, cert_label(child, i - 1, plabel, sizeof plabel));
        return false;
    }
    if (!(X509_get_key_usage(x) & KU_KEY_CERT_SIGN)) {
        fmt(err, n, "certificate %s: %s has a key usage without keyCertSign, so it cannot sign %s",
            g_set.cert_file, label, cert_label(child, i - 1, plabel, sizeof plabel));
        return false;
    }
    /* a chain out of order is GnuTLS's to report (below); same name, other key is ours */
    if (X509_NAME_cmp(X509_get_subject_name(x), X509_get_issuer_name(child)) == 0 &&
        X509_verify(child, X509_get0_pubkey(x)) != 1) {
        ERR_clear_error();
        fmt(err, n, "certificate %s: %s is not signed by %s, the next certificate in the file",
            g_set.cert_file, cert_label(child, i - 1, plabel, sizeof plabel), label);
        return false;
    }
    return true;
}

/* OpenSSL: every check a pair must pass before it is served, including what kube-apiserver's
 * Go TLS client requires of the served chain (it would otherwise only show as failed calls).
 * Fills validity, serial, subject; *not_yet: the notBefore of a certificate refused only for
 * being not valid yet (0 otherwise). */
static bool openssl_check(const jg_buf *cert, const jg_buf *key, struct pair *p, int64_t *not_yet,
                          char *err, size_t n) {
    char why[256];
    bool ok = false;
    X509 *x = NULL;
    EVP_PKEY *k = NULL;
    STACK_OF(X509) *chain = sk_X509_new_null();
    *not_yet = 0;
    BIO *cb = BIO_new_mem_buf(cert->data, (int)cert->len);
    BIO *kb = BIO_new_mem_buf(key->data, (int)key->len);
    if (!cb || !kb || !chain) {
        fmt(err, n, "out of memory");
        goto out;
    }
    x = PEM_read_bio_X509(cb, NULL, NULL, NULL);
    if (!x) {
        fmt(err, n, "%s: no PEM certificate could be parsed (%s)", g_set.cert_file,
            ssl_reason(why, sizeof why));
        goto out;
    }
    k = PEM_read_bio_PrivateKey(kb, NULL, NULL, (void *)"");
    if (!k) {
        fmt(err, n, "%s: no unencrypted PEM private key could be parsed (%s)", g_set.key_file,
            ssl_reason(why, sizeof why));
        goto out;
    }
    if (X509_check_private_key(x, k) != 1) {
        ERR_clear_error();
        fmt(err, n, "private key %s does not match certificate %s", g_set.key_file,
            g_set.cert_file);
        goto out;
    }
    if (!X509_up_ref(x)) {
        fmt(err, n, "out of memory");
        goto out;
    }
    if (!sk_X509_push(chain, x)) {
        X509_free(x);
        fmt(err, n, "out of memory");
        goto out;
    }
    for (X509 *y; sk_X509_num(chain) <= JG_TLS_MAX_CHAIN &&
                  (y = PEM_read_bio_X509(cb, NULL, NULL, NULL)) != NULL;) {
        if (!sk_X509_push(chain, y)) {
            X509_free(y);
            fmt(err, n, "out of memory");
            goto out;
        }
    }
    ERR_clear_error(); /* the end of the file */
    p->not_before = asn1_to_unix(X509_get0_notBefore(x));
    p->not_after = asn1_to_unix(X509_get0_notAfter(x));
    for (int i = 0; i < sk_X509_num(chain); i++)
        if (!check_dates(sk_X509_value(chain, i), i, not_yet, err, n)) goto out;
    if (!check_key_type(k, err, n)) goto out;
    /* Go matches names against subjectAltName only (no Common Name fallback since Go 1.15). */
    if (X509_get_ext_by_NID(x, NID_subject_alt_name, -1) < 0) {
        char cn[200];
        common_name(x, cn, sizeof cn);
        if (g_set.service_name && g_set.service_name[0])
            fmt(err, n,
                "certificate %s has no subjectAltName: Go TLS clients such as kube-apiserver "
                "ignore the Common Name (CN=%s), so the service name %s cannot be verified",
                g_set.cert_file, cn, g_set.service_name);
        else
            fmt(err, n,
                "certificate %s has no subjectAltName: Go TLS clients such as kube-apiserver "
                "ignore the Common Name (CN=%s), so no name can be verified",
                g_set.cert_file, cn);
        goto out;
    }
    if (g_set.service_name && g_set.service_name[0] &&
        X509_check_host(x, g_set.service_name, 0,
                        X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS,
                        NULL) != 1) {
        char sans[512];
        san_list(x, sans, sizeof sans);
        fmt(err, n, "certificate %s does not cover the service name %s (DNS names: %s)",
            g_set.cert_file, g_set.service_name, sans);
        goto out;
    }
    for (int i = 0; i < sk_X509_num(chain); i++)
        if (!check_eku(sk_X509_value(chain, i), i, err, n)) goto out;
    /* TLS 1.3 (which Go clients negotiate) always signs with the server key, and GnuTLS will
     * not sign with a key whose keyUsage lacks digitalSignature, whatever the key type. */
    uint32_t ku = X509_get_key_usage(x);
    if (ku != UINT32_MAX && !(ku & KU_DIGITAL_SIGNATURE)) {
        char list[200];
        ku_list(ku, list, sizeof list);
        fmt(err, n,
            "certificate %s: the leaf's key usage (%s) lacks digitalSignature, which the TLS "
            "handshake needs to sign with the server key",
            g_set.cert_file, list);
        goto out;
    }
    for (int i = 0; i < sk_X509_num(chain); i++)
        if (!check_chain_link(chain, i, err, n)) goto out;
    BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
    char *hex = bn ? BN_bn2hex(bn) : NULL;
    snprintf(p->serial, sizeof p->serial, "%s", hex ? hex : "?");
    OPENSSL_free(hex);
    BN_free(bn);
    subject_text(x, p->subject, sizeof p->subject);
    ok = true;
out:
    sk_X509_pop_free(chain, X509_free);
    X509_free(x);
    EVP_PKEY_free(k);
    BIO_free(cb);
    BIO_free(kb);
    ERR_clear_error();
    return ok;
}

static void pair_free(struct pair *p) {
    if (!p) return;
    for (unsigned i = 0; i < p->n_pcert; i++)
        gnutls_pcert_deinit(&p->pcert[i]);
    if (p->key) gnutls_privkey_deinit(p->key);
    free(p);
}

static bool gnutls_load(const jg_buf *cert, const jg_buf *key, struct pair *p, char *err,
                        size_t n) {
    gnutls_datum_t cd = {(unsigned char *)cert->data, (unsigned)cert->len};
    gnutls_datum_t kd = {(unsigned char *)key->data, (unsigned)key->len};
    unsigned count = JG_TLS_MAX_CHAIN;
    int rc = gnutls_pcert_list_import_x509_raw(p->pcert, &count, &cd, GNUTLS_X509_FMT_PEM,
                                               GNUTLS_X509_CRT_LIST_FAIL_IF_UNSORTED);
    if (rc < 0) {
        fmt(err, n, "%s: GnuTLS cannot import the certificate chain: %s", g_set.cert_file,
            gnutls_strerror(rc));
        return false;
    }
    p->n_pcert = count;
    if ((rc = gnutls_privkey_init(&p->key)) < 0 ||
        (rc = gnutls_privkey_import_x509_raw(p->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
        fmt(err, n, "%s: GnuTLS cannot import the private key: %s", g_set.key_file,
            gnutls_strerror(rc));
        return false;
    }
    return true;
}

/* Identifies a pair's content (or, when the files cannot be read, the reason), to skip
 * reloading what is already served and to report a given failure once. */
static void digest(const char *a, size_t an, const char *b, size_t bn, unsigned char out[32]) {
    memset(out, 0, 32);
    gnutls_hash_hd_t h;
    if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0) return;
    gnutls_hash(h, a, an);
    gnutls_hash(h, "", 1);
    gnutls_hash(h, b, bn);
    gnutls_hash_deinit(h, out);
}

/* Reads both files and builds a checked pair, or says why not (*unread: a file could not be
 * read at all, as opposed to bad content; *not_yet: the notBefore of a certificate refused only
 * because it is not valid yet, else 0). */
static struct pair *load_pair(unsigned char dig[32], bool *unread, int64_t *not_yet, char *err,
                              size_t n) {
    jg_buf cert = JG_BUF_INIT, key = JG_BUF_INIT;
    struct pair *p = NULL;
    memset(dig, 0, 32);
    *not_yet = 0;
    g_pair_reads++;
    jg_watch_doing("reading", g_set.cert_file);
    bool read = jg_read_regular_file(g_set.cert_file, JG_TLS_MAX_PEM_BYTES, &cert, err, n);
    if (read) {
        jg_watch_doing("reading", g_set.key_file);
        read = jg_read_regular_file(g_set.key_file, JG_TLS_MAX_PEM_BYTES, &key, err, n);
    }
    *unread = !read;
    if (!read) {
        digest(err, strlen(err), "", 0, dig);
        goto out;
    }
    jg_watch_doing("checking the key pair", g_set.cert_file);
    digest(cert.data, cert.len, key.data, key.len, dig);
    p = calloc(1, sizeof *p);
    if (!p) {
        fmt(err, n, "out of memory");
        goto out;
    }
    memcpy(p->digest, dig, 32);
    if (!openssl_check(&cert, &key, p, not_yet, err, n) || !gnutls_load(&cert, &key, p, err, n)) {
        pair_free(p);
        p = NULL;
    }
out:
    /* the key bytes should not linger in freed heap memory */
    if (key.data) memset(key.data, 0, key.cap);
    jg_buf_free(&cert);
    jg_buf_free(&key);
    return p;
}

static void log_pair(enum jg_log_level lvl, const char *msg, const struct pair *p) {
    struct jg_log l;
    if (!jg_log_begin(&l, lvl, msg)) return;
    char nb[32], na[32];
    put_utc(nb, sizeof nb, p->not_before);
    put_utc(na, sizeof na, p->not_after);
    jg_log_str(&l, "event", "certificate");
    jg_log_str(&l, "cert_file", g_set.cert_file);
    jg_log_str(&l, "key_file", g_set.key_file);
    jg_log_str(&l, "subject", p->subject);
    jg_log_str(&l, "serial", p->serial);
    jg_log_str(&l, "not_before", nb);
    jg_log_str(&l, "not_after", na);
    jg_log_uint(&l, "chain_length", p->n_pcert);
    jg_log_end(&l);
}

static bool watch_check(bool force);
static int64_t watch_due(void);

bool jg_tls_init(const struct jg_tls_settings *s, char *err, size_t errlen) {
    g_set = *s;
    g_sig[0] = jg_file_sig_of(s->cert_file);
    g_sig[1] = jg_file_sig_of(s->key_file);
    unsigned char dig[32];
    bool unread;
    int64_t not_yet; /* at startup a pair that is not valid yet is refused (exit 1) */
    struct pair *p = load_pair(dig, &unread, &not_yet, err, errlen);
    if (!p) return false;
    atomic_store(&g_current, p);
    jg_metrics_cert_expiry(p->not_after);
    log_pair(JG_LOG_INFO, "certificate loaded", p);
    jg_watch_set_poll(s->poll_interval_s);
    if (!jg_watch_add(&(struct jg_watch_entry){s->cert_file, watch_check, watch_due})) {
        fmt(err, errlen, "%s: too many watched files", s->cert_file);
        return false;
    }
    return true;
}

int jg_tls_cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                         const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                         gnutls_pcert_st **pcert, unsigned int *pcert_length,
                         gnutls_privkey_t *privkey) {
    (void)session, (void)req_ca_rdn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
    struct pair *p = atomic_load_explicit(&g_current, memory_order_acquire);
    if (!p) return -1;
    *pcert = p->pcert;
    *pcert_length = p->n_pcert;
    *privkey = p->key;
    return 0;
}

static int64_t now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

/* Frees replaced pairs whose grace period is over. */
static void reap_retired(bool all) {
    int64_t now = now_s();
    struct pair **pp = &g_retired;
    while (*pp) {
        struct pair *p = *pp;
        if (all || now - p->retired_at >= (int64_t)g_set.grace_s) {
            *pp = p->next_retired;
            pair_free(p);
        } else {
            pp = &p->next_retired;
        }
    }
}

#define SETTLE_STEP_MS 200

/* The pair looked at, and reloaded when its files changed. force: ignore the stat signature. */
enum tls_reload { TLS_UNCHANGED, TLS_RELOADED, TLS_FAILED };
static enum tls_reload check_reload(bool force) {
    reap_retired(false);
    struct jg_file_sig s[2] = {jg_file_sig_of(g_set.cert_file), jg_file_sig_of(g_set.key_file)};
    /* a pair refused as not valid yet, whose notBefore (second T: valid from T + 1) has passed */
    bool due = g_retry_at != 0 && (int64_t)time(NULL) > g_retry_at;
    if (!force && !g_retry && !due && jg_file_sig_eq(&s[0], &g_sig[0]) &&
        jg_file_sig_eq(&s[1], &g_sig[1]))
        return TLS_UNCHANGED;
    if (due) {
        char when[32];
        put_utc(when, sizeof when, g_retry_at);
        struct jg_log l;
        if (jg_log_begin(
                &l, JG_LOG_INFO,
                "certificate refused as not valid yet: notBefore has passed, trying it again")) {
            jg_log_str(&l, "event", "certificate");
            jg_log_str(&l, "cert_file", g_set.cert_file);
            jg_log_str(&l, "not_before", when);
            jg_log_end(&l);
        }
    }
    /* The two files are not replaced atomically together outside Kubernetes (an editor, cp, a
     * script renaming them one after the other): wait until they stop changing. */
    for (int i = 0; i < 10; i++) {
        if (!jg_watch_sleep(SETTLE_STEP_MS)) return TLS_UNCHANGED; /* shutting down */
        struct jg_file_sig t[2] = {jg_file_sig_of(g_set.cert_file), jg_file_sig_of(g_set.key_file)};
        bool stable = jg_file_sig_eq(&s[0], &t[0]) && jg_file_sig_eq(&s[1], &t[1]);
        s[0] = t[0];
        s[1] = t[1];
        if (stable) break;
    }
    g_sig[0] = s[0];
    g_sig[1] = s[1];

    char err[1024];
    unsigned char dig[32];
    bool unread;
    int64_t not_yet;
    struct pair *p = load_pair(dig, &unread, &not_yet, err, sizeof err);
    /* A file that could not be read (held under a lease, briefly missing) is tried again at the
     * next poll even if it does not change; the same reason is logged once. */
    g_retry = unread;
    g_retry_at = not_yet;
    struct pair *cur = atomic_load(&g_current);
    if (p && memcmp(p->digest, cur->digest, 32) == 0) {
        pair_free(p);
        jg_log_msg(JG_LOG_DEBUG, "certificate files touched, content unchanged");
        return TLS_UNCHANGED;
    }
    if (!p) {
        /* Report a given bad content once, not at every poll; a SIGHUP reports it again, and so
         * does a retry after notBefore (the pair may now fail a later check). */
        if (!force && !due && g_have_failed && memcmp(dig, g_failed_digest, 32) == 0)
            return TLS_UNCHANGED;
        memcpy(g_failed_digest, dig, 32);
        g_have_failed = true;
        jg_metrics_cert_reload(false);
        struct jg_log l;
        if (jg_log_begin(&l, JG_LOG_ERROR,
                         "certificate reload rejected, keeping the current one")) {
            jg_log_str(&l, "event", "certificate");
            jg_log_str(&l, "error", err);
            jg_log_str(&l, "serving_serial", cur->serial);
            jg_log_end(&l);
        }
        return TLS_FAILED;
    }
    atomic_store_explicit(&g_current, p, memory_order_release);
    cur->retired_at = now_s();
    cur->next_retired = g_retired;
    g_retired = cur;
    g_have_failed = false;
    jg_metrics_cert_reload(true);
    jg_metrics_cert_expiry(p->not_after);
    log_pair(JG_LOG_INFO, "certificate reloaded", p);
    return TLS_RELOADED;
}

/* The watcher's entry for the pair (watch.h): a look, and whether it read the files. */
static bool watch_check(bool force) {
    if (force) jg_log_msg(JG_LOG_INFO, "SIGHUP: checking the certificate files");
    unsigned reads = g_pair_reads;
    check_reload(force);
    return g_pair_reads != reads;
}

/* A pair refused as not valid yet is looked at again the second after its notBefore. */
static int64_t watch_due(void) {
    return g_retry_at != 0 ? g_retry_at + 1 : 0;
}

bool jg_tls_valid_now(void) {
    struct pair *p = atomic_load(&g_current);
    if (!p) return false;
    int64_t now = (int64_t)time(NULL);
    return now >= p->not_before && now < p->not_after;
}

void jg_tls_cleanup(void) {
    reap_retired(true);
    pair_free(atomic_exchange(&g_current, NULL));
}

bool jg_tls_read_ca_bundle(const char *path, jg_buf *pem, char *err, size_t errlen) {
    if (!jg_read_regular_file(path, JG_TLS_MAX_PEM_BYTES, pem, err, errlen)) return false;
    BIO *b = BIO_new_mem_buf(pem->data, (int)pem->len);
    if (!b) {
        fmt(err, errlen, "out of memory");
        return false;
    }
    int count = 0;
    X509 *x;
    while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
        count++;
        X509_free(x);
    }
    ERR_clear_error();
    BIO_free(b);
    if (count == 0) {
        fmt(err, errlen, "%s: no PEM certificate found", path);
        return false;
    }
    return true;
}

bool jg_tls_verify_client(void *session_, const char *cn, char *reason, size_t n) {
    gnutls_session_t session = session_;
    unsigned status = 0;
    gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID,
                                     (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
    int rc = gnutls_certificate_verify_peers(session, &purpose, 1, &status);
    if (rc == GNUTLS_E_NO_CERTIFICATE_FOUND) {
        fmt(reason, n, "no client certificate");
        return false;
    }
    if (rc < 0) {
        fmt(reason, n, "client certificate verification failed: %s", gnutls_strerror(rc));
        return false;
    }
    if (status != 0) {
        gnutls_datum_t out = {0};
        if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0) == 0) {
            fmt(reason, n, "client certificate rejected: %s", (const char *)out.data);
            gnutls_free(out.data);
        } else {
            fmt(reason, n, "client certificate rejected (status 0x%x)", status);
        }
        return false;
    }
    if (!cn || !cn[0]) return true;
    unsigned count = 0;
    const gnutls_datum_t *certs = gnutls_certificate_get_peers(session, &count);
    if (!certs || count == 0) {
        fmt(reason, n, "no client certificate");
        return false;
    }
    gnutls_x509_crt_t crt;
    if (gnutls_x509_crt_init(&crt) < 0) {
        fmt(reason, n, "out of memory");
        return false;
    }
    char got[256] = "";
    size_t got_len = 0;
    char *full = NULL;
    bool ok = false;
    /* asked for its size first: a long name is compared whole and quoted cut, with the marker */
    if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) >= 0 &&
        gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, NULL, &got_len) ==
            GNUTLS_E_SHORT_MEMORY_BUFFER &&
        (full = malloc(got_len + 1)) != NULL &&
        gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, full, &got_len) >=
            0) {
        ok = got_len == strlen(cn) && memcmp(full, cn, got_len) == 0;
        jg_copy_cut(got, sizeof got, full, got_len);
    }
    free(full);
    gnutls_x509_crt_deinit(crt);
    if (!ok) fmt(reason, n, "client certificate common name \"%s\" is not \"%s\"", got, cn);
    return ok;
}
