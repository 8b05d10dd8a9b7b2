/* match: name sets and compiled namespace globs for the policy rules (include/jobguard/match.h).
 * Built with the C library's allocator, as the rest of a policy snapshot is (policy.c). */
#include "jobguard/match.h"

#include <stdlib.h>
#include <string.h>

/* ---- name sets ---- */

/* Length first: most names of a set differ in length, so most comparisons read no byte. */
static int cmp_len_bytes(jg_str a, jg_str b) {
    if (a.n != b.n) return a.n < b.n ? -1 : 1;
    return a.n ? memcmp(a.p, b.p, a.n) : 0;
}

static int cmp_slot(const void *a, const void *b) {
    return cmp_len_bytes(*(const jg_str *)a, *(const jg_str *)b);
}

bool jg_strset_build(struct jg_strset *s, const char *const *v, size_t n) {
    s->n = 0;
    s->v = malloc((n ? n : 1) * sizeof *s->v);
    if (!s->v) return false;
    for (size_t i = 0; i < n; i++)
        s->v[i] = (jg_str){v[i], strlen(v[i])};
    qsort(s->v, n, sizeof *s->v, cmp_slot);
    s->n = n;
    return true;
}

bool jg_strset_has(const struct jg_strset *s, jg_str key) {
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_len_bytes(key, s->v[mid]);
        if (c == 0) return true;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}

void jg_strset_free(struct jg_strset *s) {
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* ---- globs ---- */

static void set_add(uint64_t set[4], unsigned lo, unsigned hi) {
    for (unsigned c = lo; c <= hi; c++)
        set[c >> 6] |= UINT64_C(1) << (c & 63);
}

/* The bracket expression at s[0] == '[' (closed and non-empty: the policy reader checked) into
 * set, as glibc's fnmatch reads it in the C locale: a '-' between two characters is a range of
 * byte values (empty if reversed), a '-' first, last or right after a range is itself. Returns the
 * length of the expression. tests/test_units.c compares it with fnmatch on every short one. */
static size_t parse_bracket(const char *s, uint64_t set[4]) {
    size_t i = 1;
    bool negate = s[i] == '!';
    if (negate) i++;
    memset(set, 0, 4 * sizeof *set);
    while (s[i] != ']') {
        unsigned char lo = (unsigned char)s[i++];
        if (s[i] == '-' && s[i + 1] != ']') {
            unsigned char hi = (unsigned char)s[i + 1];
            i += 2;
            if (lo <= hi) set_add(set, lo, hi);
        } else {
            set_add(set, lo, lo);
        }
    }
    if (negate) {
        for (int w = 0; w < 4; w++)
            set[w] = ~set[w];
        set[0] &= ~UINT64_C(1); /* a C string holds no NUL for fnmatch to match */
    }
    return i + 1;
}

static bool token_matches(const struct jg_glob_token *t, unsigned char c) {
    switch (t->op) {
    case 0:
        return c == t->ch;
    case '?':
        return true;
    default: /* '[' */
        return (t->set[c >> 6] >> (c & 63)) & 1;
    }
}

bool jg_glob_compile(struct jg_glob *g, const char *glob, size_t *min_len, size_t *cost) {
    size_t len = strlen(glob);
    memset(g, 0, sizeof *g);
    g->tokens = malloc((len ? len : 1) * sizeof *g->tokens); /* at most one token per byte */
    if (!g->tokens) return false;
    size_t n = 0, stars = 0, chars = 0;
    for (size_t i = 0; i < len;) {
        struct jg_glob_token *t = &g->tokens[n];
        memset(t, 0, sizeof *t);
        if (glob[i] == '*') {
            t->op = '*';
            stars++;
            while (glob[i] == '*') /* a run of '*' is one */
                i++;
        } else if (glob[i] == '?') {
            t->op = '?';
            i++;
        } else if (glob[i] == '[') {
            t->op = '[';
            i += parse_bracket(glob + i, t->set);
        } else {
            t->ch = (unsigned char)glob[i++];
            chars++;
        }
        n++;
    }
    g->n_tokens = n;
    *min_len = n - stars;
    *cost = 0;
    bool star_first = n && g->tokens[0].op == '*', star_last = n && g->tokens[n - 1].op == '*';
    if (chars == n - stars && stars <= 1 && (stars == 0 || star_first || star_last)) {
        /* only characters, around at most one '*' at an end: compared as bytes */
        g->kind = stars == 0  ? JG_GLOB_LITERAL
                  : n == 1    ? JG_GLOB_ANY
                  : star_last ? JG_GLOB_PREFIX
                              : JG_GLOB_SUFFIX;
        const char *first = glob, *last = glob + len;
        while (first < last && *first == '*')
            first++;
        while (last > first && last[-1] == '*')
            last--;
        g->text = (jg_str){first, (size_t)(last - first)};
        free(g->tokens);
        g->tokens = NULL;
        g->n_tokens = 0;
        return true;
    }
    g->kind = JG_GLOB_GENERAL;
    *cost = n;
    return true;
}

/* The classic matcher: on a mismatch, the last '*' takes one more byte and the tokens after it
 * are tried again from there. At most (name length + 1) x tokens steps. */
static bool match_tokens(const struct jg_glob_token *t, size_t nt, const unsigned char *s,
                         size_t n) {
    size_t i = 0, j = 0, star = SIZE_MAX, mark = 0;
    while (j < n) {
        if (i < nt && t[i].op == '*') {
            star = i++;
            mark = j;
        } else if (i < nt && token_matches(&t[i], s[j])) {
            i++;
            j++;
        } else if (star != SIZE_MAX) {
            i = star + 1;
            j = ++mark;
        } else {
            return false;
        }
    }
    while (i < nt && t[i].op == '*')
        i++;
    return i == nt;
}

bool jg_glob_match(const struct jg_glob *g, jg_str name) {
    jg_str t = g->text;
    switch (g->kind) {
    case JG_GLOB_LITERAL:
        return name.n == t.n && memcmp(name.p, t.p, t.n) == 0;
    case JG_GLOB_PREFIX:
        return name.n >= t.n && memcmp(name.p, t.p, t.n) == 0;
    case JG_GLOB_SUFFIX:
        return name.n >= t.n && memcmp(name.p + name.n - t.n, t.p, t.n) == 0;
    case JG_GLOB_ANY:
        return true;
    default:
        return match_tokens(g->tokens, g->n_tokens, (const unsigned char *)name.p, name.n);
    }
}

void jg_glob_free(struct jg_glob *g) {
    free(g->tokens);
    g->tokens = NULL;
}

/* ---- a controller's namespaces ---- */

bool jg_nsmatch_build(struct jg_nsmatch *m, const char *const *globs, size_t n) {
    memset(m, 0, sizeof *m);
    m->any = n == 0;
    const char **lits = malloc((n ? n : 1) * sizeof *lits);
    m->globs = malloc((n ? n : 1) * sizeof *m->globs);
    bool ok = lits && m->globs;
    size_t n_lits = 0;
    for (size_t i = 0; ok && i < n; i++) {
        struct jg_glob *g = &m->globs[m->n_globs];
        size_t min_len, cost;
        if (!(ok = jg_glob_compile(g, globs[i], &min_len, &cost))) break;
        if (g->kind == JG_GLOB_LITERAL)
            lits[n_lits++] = globs[i];
        else if (g->kind == JG_GLOB_ANY)
            m->any = true;
        else
            m->n_globs++;
    }
    ok = ok && jg_strset_build(&m->literals, lits, n_lits);
    free(lits);
    if (!ok) jg_nsmatch_free(m);
    return ok;
}

bool jg_nsmatch_has(const struct jg_nsmatch *m, jg_str ns) {
    if (m->any || jg_strset_has(&m->literals, ns)) return true;
    for (size_t i = 0; i < m->n_globs; i++)
        if (jg_glob_match(&m->globs[i], ns)) return true;
    return false;
}

void jg_nsmatch_free(struct jg_nsmatch *m) {
    for (size_t i = 0; i < m->n_globs; i++)
        jg_glob_free(&m->globs[i]);
    free(m->globs);
    jg_strset_free(&m->literals);
    memset(m, 0, sizeof *m);
}
