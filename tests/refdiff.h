/* The differential check: the request path's scanner (src/engine/decode/) against the jansson
 * reference decoder (refdecode.h) on the same bytes. Shared by tests/test_refdecode.c and
 * fuzz/fuzz_refdecode.c. Where the two may legitimately differ (docs/server.md, "The reference
 * decoder"), the comparator applies one narrow, named exception and says which in `exceptions`. */
#ifndef JOBGUARD_TESTS_REFDIFF_H
#define JOBGUARD_TESTS_REFDIFF_H

#include "jobguard/rules.h"

#include <stddef.h>

enum refdiff_kind {
    RD_DIFFER,         /* a discrepancy: `detail` says what */
    RD_SAME_VIEW,      /* both decoded it: identical view and identical response bytes */
    RD_SAME_REFUSAL,   /* both refused it with the same 400 message, uid and apiVersion */
    RD_SAME_DUPLICATE, /* both refused a repeated key where it is read (same uid, apiVersion) */
    RD_BOTH_INVALID,   /* neither takes it for JSON */
    RD_DEPTH_2048,     /* valid for the scanner, too deep for jansson: see RD_EX_DEPTH */
};

/* Exceptions applied (bits of refdiff.exceptions): */
#define RD_EX_DUPLICATE 1u /* jansson refuses any repeated key: the repeat was renamed for it */
#define RD_EX_NUL_KEY 2u   /* jansson refuses \u0000 in keys: it was rewritten \u001f for it */
#define RD_EX_BIGNUM 4u    /* jansson refuses numbers beyond int64/double: a stand-in for it */
#define RD_EX_DEPTH 8u     /* jansson counts scalars in its 2048-level limit, the scanner not */
#define RD_EX_NUL_BYTE 16u /* a raw NUL after a number or literal: jansson skips it (not asked) */
/* A CRD object's status: the scanner compares old and new as bytes, the reference as values; they
 * differ when the same status is spelled two ways (never by the API server), and then the
 * reference takes the scanner's answer. */
#define RD_EX_STATUS_BYTES 32u

struct refdiff {
    enum refdiff_kind kind;
    unsigned exceptions;
    char detail[1200];
};

/* Runs both decoders (and, on what they decode, the rules and the encoder with `cfg`). */
void refdiff_run(const char *body, size_t len, const struct jg_config *cfg, struct refdiff *out);

const char *refdiff_kind_name(enum refdiff_kind k);

/* A policy whose target rows stretch the CRD walk beyond the built-in rows (loaded once, never
 * freed): a JobSet row replacing the built-in one with four nested paths (two sharing a list,
 * one inside two lists, one at the top level), example.com Widget (managedByPath metadata.name)
 * and Gadget (managedByPath "kind", so no kind check), ray.io RayJobX (resource "rayjobs" at v2
 * only: the built-in RayJob keeps v1) and an MPIJob row (v3) replacing both built-in MPIJob rows.
 * The fuzz target and the refdecode suite run inputs under it as well as under no policy. */
const struct jg_policy *refdiff_test_policy(void);

#endif
