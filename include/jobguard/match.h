/* match: the policy's name lists and namespace globs in the form the policy rules look them up,
 * built once per policy snapshot (docs/policy.md "Limits"), so that a request's cost is linear in
 * the request: a name is found in O(log n) comparisons that check the stored length first, a
 * namespace is matched against literal, prefix and suffix globs without a glob engine, and the
 * other globs run a matcher whose work is at most (namespace length + 1) x tokens. */
#ifndef JOBGUARD_MATCH_H
#define JOBGUARD_MATCH_H

#include "jobguard/view.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A set of names: slices of the policy's strings, sorted by length, then bytes. */
struct jg_strset {
    jg_str *v;
    size_t n;
};

/* Builds `s` over v[0..n) (the strings stay owned by the caller and must outlive the set).
 * false: out of memory (s is left empty). */
bool jg_strset_build(struct jg_strset *s, const char *const *v, size_t n);
bool jg_strset_has(const struct jg_strset *s, jg_str key);
void jg_strset_free(struct jg_strset *s);

/* One namespace glob (fnmatch(3) without flags, over namespace characters) compiled. */
enum jg_glob_kind {
    JG_GLOB_LITERAL, /* no operator: the name itself */
    JG_GLOB_PREFIX,  /* "abc*" */
    JG_GLOB_SUFFIX,  /* "*abc" */
    JG_GLOB_ANY,     /* "*" (or "**"...) */
    JG_GLOB_GENERAL, /* anything else: runs the token matcher */
};

struct jg_glob_token {
    unsigned char op; /* 0: a character, '?': any one, '[': a set, '*': any run */
    unsigned char ch;
    uint64_t set[4]; /* '[': the bytes it matches */
};

struct jg_glob {
    enum jg_glob_kind kind;
    jg_str text;                  /* LITERAL, PREFIX, SUFFIX: the characters to compare */
    struct jg_glob_token *tokens; /* GENERAL only */
    size_t n_tokens;
};

/* Compiles a glob that check_namespace_glob (policy.c) accepted: [a-z0-9-], '*', '?' and closed,
 * non-empty bracket expressions [...] / [!...]. `min_len` is the fewest bytes a matching name has,
 * `cost` the tokens the general matcher steps through (0 for the other kinds). false: out of
 * memory. */
bool jg_glob_compile(struct jg_glob *g, const char *glob, size_t *min_len, size_t *cost);
bool jg_glob_match(const struct jg_glob *g, jg_str name);
void jg_glob_free(struct jg_glob *g);

/* A controller's namespace globs: the literals in a set, the others in file order. */
struct jg_nsmatch {
    bool any; /* a "*" glob, or no glob at all (every namespace) */
    struct jg_strset literals;
    struct jg_glob *globs; /* the globs that are not literals */
    size_t n_globs;
};

/* false: out of memory (m is left empty). */
bool jg_nsmatch_build(struct jg_nsmatch *m, const char *const *globs, size_t n);
bool jg_nsmatch_has(const struct jg_nsmatch *m, jg_str ns);
void jg_nsmatch_free(struct jg_nsmatch *m);

#endif
