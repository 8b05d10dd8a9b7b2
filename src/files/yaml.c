/* yaml: YAML documents as the JSON kubectl makes of them (sigs.k8s.io/yaml on its goyaml.v2 fork):
 * YAML 1.1 scalars, merge keys applied in order, the last of duplicate keys wins, keys sorted and
 * numbers written as Go's encoding/json writes them. docs/input.md has the table.
 *
 * libyaml's events build a small tree per document (per List item when a top-level mapping's
 * "items" is a sequence, so that a List is converted item by item); aliases point into it and are
 * expanded when the JSON is written, within JG_READER_MAX_DOC bytes (billion laughs).
 *
 * The tree lives in an arena of 64 KiB blocks: a node or a scalar's text is a pointer bump, and a
 * document (or a streamed List item) is freed at once by moving the arena back to where it began;
 * the blocks are kept for the next one. A map's members are gathered on one stack shared by all
 * levels, keys pointing at the scalars' own text, and sorted only when they are not in order
 * already (kubectl writes them sorted). */
#include "files.h"

#include <errno.h>
#include <math.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

/* Nesting deeper than this is refused: the JSON is written recursively. */
#define MAX_DEPTH 512
#define TOO_DEEP "nesting deeper than " JG_STRINGIFY(MAX_DEPTH) " levels"
/* The most memory a document's tree (its nodes and texts, anchors kept) may take while it is
 * built: twice the document limit, counted as it grows. A node is 56 bytes and writes at least 2
 * bytes of JSON, so the largest object the API server accepts (3 MiB, 1.6 million one-digit
 * numbers at most) fits, and a flood of tiny values is refused long before the JSON's limit could
 * be checked (16 million flow items took 1.8 GB). */
#define TREE_MAX (2 * JG_READER_MAX_DOC)

enum kind { N_SCALAR, N_SEQ, N_MAP, N_ALIAS };

struct node {
    unsigned char kind; /* enum kind */
    bool plain;         /* scalar: plain (unquoted, untagged) */
    bool anchored;      /* an anchor names it */
    bool streamed;      /* the List's items: children are yielded, not kept */
    bool busy;          /* being written (an alias to it from inside is a cycle) */
    unsigned line, col; /* 1-based start */
    char *tag;          /* NULL or the event's tag */
    struct node *next;  /* the next sibling */
    union {             /* by kind: 56 bytes a node, counted against the tree's limit */
        struct {        /* N_SCALAR */
            char *s;    /* the value (NUL-terminated) */
            size_t len;
        };
        struct {                       /* N_SEQ, N_MAP */
            struct node *first, *last; /* seq: items; map: key, value, key, value... */
            size_t n;                  /* children */
        };
        struct {                 /* N_ALIAS */
            char *anchor;        /* the name */
            struct node *target; /* the anchored node */
        };
    };
};

struct anchor {
    const char *name;
    struct node *node;
};

/* A map member after merges, before duplicates are dropped: the last one (highest seq) wins. */
struct member {
    const char *key;
    size_t klen;
    const struct node *value;
    size_t seq;
};

/* ------------------------------------------------------------------ arena */

#define BLOCK ((size_t)64 << 10)
/* Spare blocks kept from one document to the next; more are freed (a large document's tree
 * would otherwise stay resident for the rest of the input). */
#define SPARE_MAX ((size_t)2 << 20)

struct block {
    struct block *prev;
    size_t cap, used;
    alignas(max_align_t) char data[];
};

struct mark {
    struct block *b;
    size_t used;
};

struct arena {
    struct block *cur;   /* the block being filled; prev: the ones before it */
    struct block *spare; /* blocks given back, reused before malloc */
    size_t live;         /* bytes of the blocks in use (cur and before it) */
    size_t spared;       /* bytes of the spare blocks */
};

/* n bytes aligned to align (a power of two, at most max_align_t's): texts need none. */
static void *arena_alloc(struct arena *a, size_t n, size_t align) {
    struct block *b = a->cur;
    size_t at = b ? (b->used + align - 1) & ~(align - 1) : 0;
    if (!b || at > b->cap || b->cap - at < n) {
        struct block *s = a->spare;
        if (s && s->cap >= n) {
            a->spare = s->prev;
            a->spared -= s->cap;
        } else {
            size_t cap = n > BLOCK ? n : BLOCK;
            s = malloc(sizeof *s + cap);
            if (!s) return NULL;
            s->cap = cap;
        }
        s->prev = b;
        s->used = 0;
        a->cur = b = s;
        a->live += s->cap;
        at = 0;
    }
    void *p = b->data + at;
    b->used = at + n;
    return p;
}

static char *arena_dup(struct arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1, 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static struct mark arena_mark(const struct arena *a) {
    return (struct mark){a->cur, a->cur ? a->cur->used : 0};
}

/* Frees everything allocated since m (the blocks are kept as spares, up to SPARE_MAX). */
static void arena_release(struct arena *a, struct mark m) {
    while (a->cur != m.b) {
        struct block *b = a->cur;
        a->cur = b->prev;
        a->live -= b->cap;
        if (a->spared + b->cap > SPARE_MAX) {
            free(b);
            continue;
        }
        b->prev = a->spare;
        a->spare = b;
        a->spared += b->cap;
    }
    if (a->cur) a->cur->used = m.used;
}

static void arena_free(struct arena *a) {
    arena_release(a, (struct mark){NULL, 0});
    while (a->spare) {
        struct block *b = a->spare;
        a->spare = b->prev;
        free(b);
    }
    a->spared = 0;
}

struct jg_yaml_stream {
    yaml_parser_t parser;
    int fd;
    const char *pre;
    size_t npre, used;
    char *source;
    bool failed; /* libyaml error: the rest of the stream is unreadable */
    bool done;
    size_t limit;        /* the most JSON a document may expand to (aliases included) */
    bool skip;           /* a conversion error: the rest of this document is skipped */
    unsigned skip_depth; /* nesting met while skipping (above where the skip began) */
    size_t doc;
    struct arena arena;    /* the document's nodes and texts */
    struct mark item_mark; /* where the streamed List item being built began */
    size_t item_anchors;   /* anchors defined before it */
    struct node *stack[MAX_DEPTH + 2];
    size_t depth;
    struct node *root;            /* a complete document waiting to be yielded, or NULL */
    const struct node *items;     /* root's items when the List was found after the fact */
    const struct node *next_item; /* the next of them to yield */
    long item;
    bool listed; /* the document's List items were streamed (a second "items" is refused) */
    struct anchor *anchors;
    size_t nanchors, capanchors;
    struct member *mem; /* members of the maps being written, innermost last */
    size_t nmem, capmem;
    size_t pushes; /* members pushed for the document being written */
};

/* ------------------------------------------------------------------ tree */

/* Frees the document: its nodes, texts and anchors. */
static void end_document(jg_yaml_stream *y) {
    y->depth = 0;
    y->root = NULL;
    y->items = NULL;
    y->next_item = NULL;
    y->listed = false;
    y->nanchors = 0;
    y->nmem = 0;
    arena_release(&y->arena, (struct mark){NULL, 0});
}

static void add_kid(struct node *p, struct node *k) {
    k->next = NULL;
    if (p->last)
        p->last->next = k;
    else
        p->first = k;
    p->last = k;
    p->n++;
}

static bool add_anchor(jg_yaml_stream *y, const char *name, struct node *n) {
    if (y->nanchors == y->capanchors) {
        size_t cap = y->capanchors ? y->capanchors * 2 : 8;
        struct anchor *v = realloc(y->anchors, cap * sizeof *v);
        if (!v) return false;
        y->anchors = v;
        y->capanchors = cap;
    }
    char *s = arena_dup(&y->arena, name, strlen(name));
    if (!s) return false;
    y->anchors[y->nanchors++] = (struct anchor){s, n};
    n->anchored = true;
    return true;
}

static struct node *find_anchor(jg_yaml_stream *y, const char *name) {
    for (size_t i = y->nanchors; i-- > 0;) /* the latest definition wins */
        if (strcmp(y->anchors[i].name, name) == 0) return y->anchors[i].node;
    return NULL;
}

/* ------------------------------------------------------------------ scalars (goyaml.v2 resolve) */

enum rkind { R_STR, R_NULL, R_BOOL, R_INT, R_UINT, R_FLOAT, R_MERGE, R_ERROR };
struct resolved {
    enum rkind kind;
    bool b;
    int64_t i;
    uint64_t u;
    double f;
};

struct word {
    const char *s;
    size_t n;
};
#define W(s)                                                                                       \
    { s, sizeof s - 1 }

static bool in_list(const char *s, size_t n, const struct word *l) {
    for (; l->s; l++)
        if (l->n == n && memcmp(l->s, s, n) == 0) return true;
    return false;
}

static const struct word yes[] = {W("y"),    W("Y"),    W("yes"), W("Yes"), W("YES"), W("true"),
                                  W("True"), W("TRUE"), W("on"),  W("On"),  W("ON"),  {NULL, 0}};
static const struct word no[] = {W("n"),     W("N"),     W("no"),  W("No"),  W("NO"),  W("false"),
                                 W("False"), W("FALSE"), W("off"), W("Off"), W("OFF"), {NULL, 0}};
static const struct word nulls[] = {W(""), W("~"), W("null"), W("Null"), W("NULL"), {NULL, 0}};
static const struct word nans[] = {W(".nan"), W(".NaN"), W(".NAN"), {NULL, 0}};
static const struct word pinf[] = {W(".inf"),  W(".Inf"),  W(".INF"), W("+.inf"),
                                   W("+.Inf"), W("+.INF"), {NULL, 0}};
static const struct word ninf[] = {W("-.inf"), W("-.Inf"), W("-.INF"), {NULL, 0}};
#undef W

/* Go's strconv.ParseInt/ParseUint with base 0 (0x, 0o, 0b, leading 0 octal). */
static bool go_parse_int(const char *s, bool allow_sign, bool *neg, uint64_t *mag) {
    *neg = false;
    if (*s == '+' || *s == '-') {
        if (!allow_sign) return false;
        *neg = *s == '-';
        s++;
    }
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        base = 8, s += 2;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2, s += 2;
    else if (s[0] == '0' && s[1])
        base = 8, s += 1;
    if (!*s) return false;
    uint64_t v = 0;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (*s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (*s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return false;
        if (d >= base) return false;
        if (v > (UINT64_MAX - d) / base) return false;
        v = v * base + d;
    }
    *mag = v;
    return true;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s) {
    if (*s == '+' || *s == '-') s++;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9')) return false;
        while (*s >= '0' && *s <= '9')
            s++;
    } else {
        if (!(*s >= '0' && *s <= '9')) return false;
        while (*s >= '0' && *s <= '9')
            s++;
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9')
                s++;
        }
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(*s >= '0' && *s <= '9')) return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

static bool parse_float(const char *s, double *f) {
    errno = 0;
    char *e;
    *f = strtod(s, &e);
    return *e == '\0' && !(errno == ERANGE && isinf(*f));
}

/* The short form of a tag: "!!int" for tag:yaml.org,2002:int. */
static const char *short_tag(const char *tag, char *buf, size_t n) {
    static const char prefix[] = "tag:yaml.org,2002:";
    if (tag && strncmp(tag, prefix, sizeof prefix - 1) == 0) {
        snprintf(buf, n, "!!%s", tag + sizeof prefix - 1);
        return buf;
    }
    return tag ? tag : "";
}

/* The first bytes goyaml.v2's resolve table lists: only these can start a non-string. */
static const bool hint_byte[256] = {
    ['+'] = true, ['-'] = true, ['0'] = true, ['1'] = true, ['2'] = true, ['3'] = true,
    ['4'] = true, ['5'] = true, ['6'] = true, ['7'] = true, ['8'] = true, ['9'] = true,
    ['y'] = true, ['Y'] = true, ['n'] = true, ['N'] = true, ['t'] = true, ['T'] = true,
    ['f'] = true, ['F'] = true, ['o'] = true, ['O'] = true, ['~'] = true, ['.'] = true,
};

/* A scalar that is a string whatever its text: quoted without a tag, or plain and starting with
 * a byte no other type starts with (resolve_text's answer, without asking it). */
static bool surely_string(const char *s, size_t n, bool plain, const char *tag) {
    return !tag && (!plain || (n > 0 && !hint_byte[(unsigned char)s[0]]));
}

/* A plain scalar starting with c0 ('.', a sign or a digit) as an int, uint or float into *r
 * (left a string when it is none). Underscores are dropped except after a leading '.', as
 * goyaml.v2 does. False when out of memory. */
static bool resolve_number(const char *s, size_t n, char c0, struct resolved *r) {
    char small[64];
    char *plain = n < sizeof small ? small : malloc(n + 1);
    if (!plain) return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '_' || c0 == '.') plain[k++] = s[i];
    plain[k] = '\0';
    if (c0 == '.') {
        double f;
        if (yaml_style_float(plain) && parse_float(plain, &f))
            *r = (struct resolved){.kind = R_FLOAT, .f = f};
    } else {
        /* timestamps (YYYY-...) are kept as the text: they never parse as numbers below */
        bool neg;
        uint64_t mag;
        double f;
        if (go_parse_int(plain, true, &neg, &mag) &&
            (neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX)) {
            r->kind = R_INT;
            r->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
        } else if (go_parse_int(plain, false, &neg, &mag)) {
            r->kind = R_UINT;
            r->u = mag;
        } else if (yaml_style_float(plain) && parse_float(plain, &f)) {
            *r = (struct resolved){.kind = R_FLOAT, .f = f};
        }
    }
    if (plain != small) free(plain);
    return true;
}

/* A scalar quoted in a one-line message: at most 200 bytes, control bytes escaped (\n, \t,
 * \xNN), "..." when cut. */
static void show_scalar(const char *s, size_t n, char *out, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < n && i < 200 && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' || c == '\t' || c == '\r')
            o += (size_t)snprintf(out + o, cap - o, "\\%c",
                                  c == '\n'   ? 'n'
                                  : c == '\t' ? 't'
                                              : 'r');
        else if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o] = '\0';
    if (n > 200 && o + sizeof "..." < cap) memcpy(out + o, "...", sizeof "..."); /* with its NUL */
}

/* goyaml.v2's resolve() of a plain scalar (or one with a resolvable tag). */
static struct resolved resolve_text(const char *s, size_t n, const char *tag, char *err,
                                    size_t errlen) {
    struct resolved r = {.kind = R_STR};
    char c0 = n ? s[0] : 0;
    /* goyaml.v2's resolve table: only these first bytes can start a non-string */
    bool hint = n == 0 || hint_byte[(unsigned char)c0];
    if (hint && strcmp(tag, "!!str") != 0 && strcmp(tag, "!!binary") != 0) {
        if (n <= 5) { /* the longest word below */
            if (in_list(s, n, yes)) return (struct resolved){.kind = R_BOOL, .b = true};
            if (in_list(s, n, no)) return (struct resolved){.kind = R_BOOL, .b = false};
            if (in_list(s, n, nulls)) return (struct resolved){.kind = R_NULL};
            if (in_list(s, n, nans)) return (struct resolved){.kind = R_FLOAT, .f = NAN};
            if (in_list(s, n, pinf)) return (struct resolved){.kind = R_FLOAT, .f = INFINITY};
            if (in_list(s, n, ninf)) return (struct resolved){.kind = R_FLOAT, .f = -INFINITY};
        }
        /* only numbers are left, and they start with one of these */
        if (c0 == '.' || c0 == '+' || c0 == '-' || (c0 >= '0' && c0 <= '9'))
            if (!resolve_number(s, n, c0, &r)) {
                snprintf(err, errlen, "out of memory");
                return (struct resolved){.kind = R_ERROR};
            }
    }
    if (tag[0] == '\0' || strcmp(tag, "!!str") == 0 || strcmp(tag, "!!binary") == 0) return r;
    /* an explicit tag must agree with what the text resolves to */
    static const char *const names[] = {"!!str", "!!null",  "!!bool", "!!int",
                                        "!!int", "!!float", "!!merge"};
    const char *got = names[r.kind];
    if (strcmp(tag, got) == 0 || strcmp(tag, "!!timestamp") == 0) return r;
    if (strcmp(tag, "!!float") == 0 && (r.kind == R_INT || r.kind == R_UINT)) {
        double f = r.kind == R_INT ? (double)r.i : (double)r.u;
        return (struct resolved){.kind = R_FLOAT, .f = f};
    }
    char shown[200 * 4 + 4];
    show_scalar(s, n, shown, sizeof shown);
    snprintf(err, errlen, "yaml: cannot decode %s `%s` as a %s", got, shown, tag);
    return (struct resolved){.kind = R_ERROR};
}

static bool resolvable(const char *tag) {
    return !tag[0] || strcmp(tag, "!!str") == 0 || strcmp(tag, "!!bool") == 0 ||
           strcmp(tag, "!!int") == 0 || strcmp(tag, "!!float") == 0 || strcmp(tag, "!!null") == 0 ||
           strcmp(tag, "!!timestamp") == 0;
}

/* A scalar node as kubectl reads it. A quoted scalar without a tag is a string. */
static struct resolved resolve_node(const struct node *n, char *err, size_t errlen) {
    char tb[256];
    const char *tag = short_tag(n->tag, tb, sizeof tb);
    if (!n->tag && !n->plain) return (struct resolved){.kind = R_STR};
    if (!resolvable(tag)) return (struct resolved){.kind = R_STR};
    return resolve_text(n->s, n->len, tag, err, errlen);
}

/* ------------------------------------------------------------------ numbers as Go writes them */

/* Shortest digits of f that read back as f (as a float when `single`), and the decimal exponent
 * of the first digit. */
static int shortest(double f, bool single, char *digits, int *exp10) {
    char b[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*e", p - 1, f);
        double back = strtod(b, NULL);
        if (single ? (float)back == (float)f : back == f) break;
    }
    int nd = 0;
    char *e = strchr(b, 'e');
    for (char *q = b; q < e; q++)
        if (*q >= '0' && *q <= '9') digits[nd++] = *q;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    *exp10 = atoi(e + 1);
    return nd;
}

static void put_fixed(jg_buf *b, const char *d, int nd, int exp10) {
    int dp = exp10 + 1; /* digits before the point */
    if (dp <= 0) {
        jg_buf_puts(b, "0.");
        for (int i = 0; i < -dp; i++)
            jg_buf_putc(b, '0');
        jg_buf_put(b, d, (size_t)nd);
    } else if (dp >= nd) {
        jg_buf_put(b, d, (size_t)nd);
        for (int i = nd; i < dp; i++)
            jg_buf_putc(b, '0');
    } else {
        jg_buf_put(b, d, (size_t)dp);
        jg_buf_putc(b, '.');
        jg_buf_put(b, d + dp, (size_t)(nd - dp));
    }
}

static void put_exp(jg_buf *b, const char *d, int nd, int exp10, bool json) {
    jg_buf_putc(b, d[0]);
    if (nd > 1) {
        jg_buf_putc(b, '.');
        jg_buf_put(b, d + 1, (size_t)(nd - 1));
    }
    int e = exp10 < 0 ? -exp10 : exp10;
    /* strconv writes at least two exponent digits; encoding/json trims e-07 to e-7 */
    jg_buf_printf(b, "e%c%s%d", exp10 < 0 ? '-' : '+', e < 10 && !(json && exp10 < 0) ? "0" : "",
                  e);
}

/* encoding/json's float64, as kubectl ends up writing it (-0 reads back as the integer 0). */
static void put_json_float(jg_buf *b, double f) {
    if (f == 0) {
        jg_buf_putc(b, '0');
        return;
    }
    char d[32];
    int e;
    int nd = shortest(f, false, d, &e);
    if (f < 0) jg_buf_putc(b, '-');
    double a = fabs(f);
    if (a < 1e-6 || a >= 1e21)
        put_exp(b, d, nd, e, true);
    else
        put_fixed(b, d, nd, e);
}

/* strconv.FormatFloat(f, 'g', -1, 32): how sigs.k8s.io/yaml names a float map key. */
static void put_key_float(jg_buf *b, double f) {
    if (isnan(f)) return jg_buf_puts(b, ".nan");
    if (isinf(f)) return jg_buf_puts(b, f > 0 ? ".inf" : "-.inf");
    if (f == 0) return jg_buf_puts(b, signbit(f) ? "-0" : "0");
    char d[32];
    int e;
    int nd = shortest(f, true, d, &e);
    if (f < 0) jg_buf_putc(b, '-');
    if (e < -4 || e >= 6)
        put_exp(b, d, nd, e, false);
    else
        put_fixed(b, d, nd, e);
}

/* ------------------------------------------------------------------ writing JSON */

struct writer {
    jg_yaml_stream *y;
    jg_buf *out;
    char *err;
    size_t errlen;
    unsigned line, col; /* where the problem is */
};

static bool wfail(struct writer *w, const struct node *n, const char *msg) {
    w->line = n->line;
    w->col = n->col;
    if (msg) snprintf(w->err, w->errlen, "%s", msg);
    return false;
}

static const struct node *deref(const struct node *n) {
    while (n && n->kind == N_ALIAS)
        n = n->target;
    return n;
}

static bool b64(const char *s, size_t n, jg_buf *out) {
    unsigned v = 0;
    int bits = 0;
    size_t pad = 0, data = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int d;
        if (c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
        if (c == '=') {
            pad++;
            continue;
        }
        if (pad) return false;
        if (c >= 'A' && c <= 'Z')
            d = c - 'A';
        else if (c >= 'a' && c <= 'z')
            d = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            d = c - '0' + 52;
        else if (c == '+')
            d = 62;
        else if (c == '/')
            d = 63;
        else
            return false;
        data++;
        v = (v << 6) | (unsigned)d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            jg_buf_putc(out, (char)((v >> bits) & 0xFF));
        }
    }
    return (data + pad) % 4 == 0 && pad <= 2;
}

/* jg_buf_putc and jg_buf_json_string without a call for what fits (the JSON is mostly these). */
static inline void out_c(jg_buf *b, char c) {
    if (!b->oom && b->len + 2 <= b->cap) {
        b->data[b->len++] = c;
        b->data[b->len] = '\0';
    } else {
        jg_buf_putc(b, c);
    }
}

/* A byte jg_buf_json_string writes as it is. */
static inline bool plain_json(unsigned char c) {
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
}

/* The length of s's first run of bytes plain_json takes. */
static size_t plain_run(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && plain_json((unsigned char)s[i]))
        i++;
    return i;
}

static void out_str(jg_buf *b, const char *s, size_t n) {
    size_t i = plain_run(s, n);
    if (i < n || !jg_buf_reserve(b, n + 2)) return jg_buf_json_string(b, s, n);
    char *p = b->data + b->len;
    p[0] = '"';
    memcpy(p + 1, s, n);
    p[n + 1] = '"';
    p[n + 2] = '\0';
    b->len += n + 2;
}

/* Pushes a member on the stream's member stack (the member of node `at`). Merges push a merged
 * map's members again at each use, and each alias of such a map repeats them all (a 99 KB policy
 * merging one map of 2,000 keys 20,000 times took 53 s and 2.5 GB). So the stack holds at most
 * the JSON limit in bytes, and one document pushes at most limit/16 members (4 Mi for a document,
 * 64 Ki for a policy). Without merges a document pushes one member per member it writes, and
 * its tree (TREE_MAX) holds fewer than that. */
static bool push_member(struct writer *w, const struct node *at, const char *k, size_t kl,
                        const struct node *v) {
    jg_yaml_stream *y = w->y;
    if (y->nmem >= y->limit / sizeof *y->mem || ++y->pushes > y->limit / 16) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "yaml: merge keys gather more map members than the %zu MiB limit allows",
                 y->limit >> 20);
        return wfail(w, at, msg);
    }
    if (y->nmem == y->capmem) {
        size_t cap = y->capmem ? y->capmem * 2 : 64;
        struct member *nv = realloc(y->mem, cap * sizeof *nv);
        if (!nv) return wfail(w, at, "out of memory");
        y->mem = nv;
        y->capmem = cap;
    }
    y->mem[y->nmem] = (struct member){k, kl, v, y->nmem};
    y->nmem++;
    return true;
}

/* Go's order of map keys: bytewise, a prefix first. */
static int cmp_key(const struct member *x, const struct member *y) {
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    if (n && x->key[0] != y->key[0]) /* mostly decided by the first byte */
        return (unsigned char)x->key[0] < (unsigned char)y->key[0] ? -1 : 1;
    int c = memcmp(x->key, y->key, n);
    return c ? c : (x->klen > y->klen) - (x->klen < y->klen);
}

static int cmp_member(const void *a, const void *b) {
    const struct member *x = a, *y = b;
    int c = cmp_key(x, y);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The members pushed since base, sorted by key with the last of each key kept. Returns how many
 * are left (at y->mem[base...]). */
static size_t finish_members(jg_yaml_stream *y, size_t base) {
    size_t n = y->nmem - base, i = 1;
    if (n == 0) return 0; /* y->mem may be NULL ({} or `<<: []` before any member) */
    struct member *m = y->mem + base;
    while (i < n && cmp_key(&m[i - 1], &m[i]) < 0) /* in order, no duplicates: done */
        i++;
    if (i >= n) return n;
    if (n <= 16) {
        for (; i < n; i++) {
            struct member t = m[i];
            size_t j = i;
            for (; j > 0 && cmp_member(&m[j - 1], &t) > 0; j--)
                m[j] = m[j - 1];
            m[j] = t;
        }
    } else {
        qsort(m, n, sizeof *m, cmp_member);
    }
    size_t k = 0;
    for (i = 0; i < n; i++) {
        if (k > 0 && cmp_key(&m[k - 1], &m[i]) == 0)
            m[k - 1] = m[i]; /* the last one wins */
        else
            m[k++] = m[i];
    }
    y->nmem = base + k;
    return k;
}

static bool collect(struct writer *w, const struct node *map, unsigned depth);

/* `<<: value`: a mapping, or a sequence of mappings of which the first wins (goyaml.v2). */
static bool merge(struct writer *w, const struct node *v, unsigned depth) {
    const struct node *t = deref(v);
    if (t && t->busy) {
        char msg[300];
        snprintf(msg, sizeof msg, "yaml: anchor '%s' value contains itself",
                 v->kind == N_ALIAS ? v->anchor : "");
        return wfail(w, v, msg);
    }
    if (t && t->kind == N_MAP) return collect(w, t, depth + 1);
    if (t && t->kind == N_SEQ) {
        /* the last first, so that the first one's members are pushed last and win */
        const struct node *stack_small[16], **kids = stack_small;
        if (t->n > 16) {
            kids = malloc(t->n * sizeof *kids);
            if (!kids) return wfail(w, v, "out of memory");
        }
        size_t i = 0;
        for (const struct node *k = t->first; k; k = k->next)
            kids[i++] = k;
        bool ok = true;
        while (ok && i-- > 0) {
            const struct node *e = deref(kids[i]);
            if (!e || e->kind != N_MAP)
                ok = wfail(w, kids[i],
                           "yaml: map merge requires map or sequence of maps as the value");
            else
                ok = collect(w, e, depth + 1);
        }
        if (kids != stack_small) free(kids);
        return ok;
    }
    return wfail(w, v, "yaml: map merge requires map or sequence of maps as the value");
}

/* A non-string key's text (bool, int, float, binary) kept in the arena. */
static bool push_made_key(struct writer *w, const struct node *kn, const jg_buf *key,
                          const struct node *v) {
    const char *k = key->oom ? NULL : arena_dup(&w->y->arena, key->data ? key->data : "", key->len);
    if (!k) return wfail(w, kn, "out of memory");
    return push_member(w, kn, k, key->len, v);
}

/* Pushes map's members (merges applied, in the order they were written) on the member stack. */
static bool collect(struct writer *w, const struct node *map, unsigned depth) {
    if (depth > MAX_DEPTH) return wfail(w, map, TOO_DEEP);
    for (const struct node *kn = map->first; kn && kn->next; kn = kn->next->next) {
        const struct node *k = deref(kn), *v = kn->next;
        if (k->kind != N_SCALAR)
            return wfail(w, kn,
                         k->kind == N_MAP ? "yaml: invalid map key: a mapping"
                                          : "yaml: invalid map key: a sequence");
        /* the common case first: a plain or quoted key without a tag that is a string */
        if (surely_string(k->s, k->len, k->plain, k->tag) && !JG_LIT_EQ(k->s, k->len, "<<")) {
            if (!push_member(w, kn, k->s, k->len, v)) return false;
            continue;
        }
        char err[300];
        err[0] = '\0';
        /* goyaml.v2's isMerge: a plain "<<" (or one tagged !!merge) */
        bool is_merge =
            JG_LIT_EQ(k->s, k->len, "<<") &&
            ((k->plain && !k->tag) || (k->tag && strcmp(k->tag, "tag:yaml.org,2002:merge") == 0));
        struct resolved r =
            is_merge ? (struct resolved){.kind = R_MERGE} : resolve_node(k, err, sizeof err);
        jg_buf key = JG_BUF_INIT;
        bool ok;
        switch (r.kind) {
        case R_ERROR:
            return wfail(w, kn, err);
        case R_MERGE:
            if (!merge(w, v, depth)) return false;
            continue;
        case R_STR:
            if (k->tag && strcmp(k->tag, "tag:yaml.org,2002:binary") == 0) {
                if (!b64(k->s, k->len, &key)) {
                    jg_buf_free(&key);
                    return wfail(w, kn, "yaml: !!binary value contains invalid base64 data");
                }
                break;
            }
            if (!push_member(w, kn, k->s, k->len, v)) return false;
            continue;
        case R_NULL:
            return wfail(w, kn, "unsupported map key of type: <nil> (a null key)");
        case R_BOOL:
            jg_buf_puts(&key, r.b ? "true" : "false");
            break;
        case R_INT:
            jg_buf_put_i64(&key, r.i);
            break;
        case R_UINT:
            return wfail(w, kn, "unsupported map key of type: uint64");
        case R_FLOAT:
            put_key_float(&key, r.f);
            break;
        }
        ok = push_made_key(w, kn, &key, v);
        jg_buf_free(&key);
        if (!ok) return false;
    }
    return true;
}

static bool write_scalar(struct writer *w, const struct node *n) {
    if (surely_string(n->s, n->len, n->plain, n->tag)) {
        out_str(w->out, n->s, n->len);
        return true;
    }
    char err[300];
    err[0] = '\0';
    struct resolved r = resolve_node(n, err, sizeof err);
    switch (r.kind) {
    case R_ERROR:
        return wfail(w, n, err);
    case R_STR:
    case R_MERGE:
        if (n->tag && strcmp(n->tag, "tag:yaml.org,2002:binary") == 0) {
            jg_buf raw = JG_BUF_INIT;
            bool ok = b64(n->s, n->len, &raw);
            if (ok) jg_buf_json_string(w->out, raw.data ? raw.data : "", raw.len);
            jg_buf_free(&raw);
            if (!ok) return wfail(w, n, "yaml: !!binary value contains invalid base64 data");
        } else {
            out_str(w->out, n->s, n->len);
        }
        return true;
    case R_NULL:
        jg_buf_puts(w->out, "null");
        return true;
    case R_BOOL:
        jg_buf_puts(w->out, r.b ? "true" : "false");
        return true;
    case R_INT:
        jg_buf_put_i64(w->out, r.i);
        return true;
    case R_UINT: /* kubectl reads it back as a float64 */
        put_json_float(w->out, (double)r.u);
        return true;
    case R_FLOAT:
        if (isnan(r.f)) return wfail(w, n, "json: unsupported value: NaN");
        if (isinf(r.f))
            return wfail(
                w, n, r.f > 0 ? "json: unsupported value: +Inf" : "json: unsupported value: -Inf");
        put_json_float(w->out, r.f);
        return true;
    }
    return true;
}

static bool write_node(struct writer *w, const struct node *n, unsigned depth) {
    if (depth > MAX_DEPTH) return wfail(w, n, TOO_DEEP);
    if (w->out->len > w->y->limit) {
        char msg[200];
        snprintf(
            msg, sizeof msg,
            "document larger than the %zu MiB limit as JSON (aliases expand to more than that?)",
            w->y->limit >> 20);
        return wfail(w, n, msg);
    }
    if (n->kind == N_ALIAS) {
        struct node *t = n->target;
        if (t->busy) {
            char msg[300];
            snprintf(msg, sizeof msg, "yaml: anchor '%s' value contains itself", n->anchor);
            return wfail(w, n, msg);
        }
        return write_node(w, t, depth + 1);
    }
    if (n->kind == N_SCALAR) return write_scalar(w, n);
    ((struct node *)n)->busy = true;
    bool ok = true;
    if (n->kind == N_SEQ) {
        out_c(w->out, '[');
        for (const struct node *k = n->first; ok && k; k = k->next) {
            if (k != n->first) out_c(w->out, ',');
            ok = write_node(w, k, depth + 1);
        }
        out_c(w->out, ']');
    } else {
        jg_yaml_stream *y = w->y;
        size_t base = y->nmem;
        ok = collect(w, n, depth);
        if (ok) {
            size_t cnt = finish_members(y, base);
            out_c(w->out, '{');
            for (size_t i = 0; ok && i < cnt; i++) {
                /* y->mem moves when a nested map grows it: read it afresh */
                const struct member *m = &y->mem[base + i];
                if (i) out_c(w->out, ',');
                out_str(w->out, m->key, m->klen);
                out_c(w->out, ':');
                ok = write_node(w, m->value, depth + 1);
            }
            out_c(w->out, '}');
        }
        y->nmem = base;
    }
    ((struct node *)n)->busy = false;
    return ok;
}

/* ------------------------------------------------------------------ events */

static int yerr(jg_yaml_stream *y, unsigned line, unsigned col, const char *what, char *err,
                size_t errlen) {
    snprintf(err, errlen, "%s:%u:%u: %s", y->source, line, col, what);
    return -1;
}

static int input(void *data, unsigned char *buffer, size_t size, size_t *size_read) {
    jg_yaml_stream *y = data;
    if (y->used < y->npre) {
        size_t n = y->npre - y->used < size ? y->npre - y->used : size;
        memcpy(buffer, y->pre + y->used, n);
        y->used += n;
        *size_read = n;
        return 1;
    }
    for (;;) {
        ssize_t n = y->fd >= 0 ? read(y->fd, buffer, size) : 0;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return 0;
        *size_read = (size_t)n;
        return 1;
    }
}

jg_yaml_stream *jg_yaml_stream_open(int fd, const char *pre, size_t npre, const char *source) {
    jg_yaml_stream *y = calloc(1, sizeof *y);
    if (!y) return NULL;
    y->source = strdup(source);
    if (!y->source || !yaml_parser_initialize(&y->parser)) {
        free(y->source);
        free(y);
        return NULL;
    }
    y->fd = fd;
    y->limit = JG_READER_MAX_DOC;
    y->pre = pre;
    y->npre = npre;
    yaml_parser_set_input(&y->parser, input, y);
    return y;
}

void jg_yaml_stream_close(jg_yaml_stream *y) {
    if (!y) return;
    end_document(y);
    yaml_parser_delete(&y->parser);
    arena_free(&y->arena);
    free(y->anchors);
    free(y->mem);
    free(y->source);
    free(y);
}

/* Writes node n as the document's JSON into out and fills d. */
static int emit(jg_yaml_stream *y, const struct node *n, long item, jg_buf *out, struct jg_doc *d,
                char *err, size_t errlen) {
    jg_buf_reset(out);
    y->pushes = 0;
    char msg[512];
    msg[0] = '\0';
    struct writer w = {y, out, msg, sizeof msg, n->line, n->col};
    if (!write_node(&w, n, 0)) return yerr(y, w.line, w.col, msg, err, errlen);
    if (out->oom) return yerr(y, n->line, n->col, "out of memory", err, errlen);
    d->json = out->data;
    d->len = out->len;
    d->source = y->source;
    d->line = n->line;
    d->doc = y->doc;
    d->item = item;
    return 1;
}

/* The "items" sequence of a top-level mapping (after merges; kubectl's List rule), or NULL. */
static const struct node *list_items(jg_yaml_stream *y, const struct node *root) {
    if (root->kind != N_MAP) return NULL;
    char msg[300];
    struct writer w = {y, NULL, msg, sizeof msg, 0, 0};
    const struct node *items = NULL;
    size_t base = y->nmem;
    y->pushes = 0;
    if (collect(&w, root, 0)) {
        size_t cnt = finish_members(y, base);
        for (size_t i = 0; i < cnt; i++) {
            const struct member *m = &y->mem[base + i];
            if (JG_LIT_EQ(m->key, m->klen, "items")) {
                const struct node *v = deref(m->value);
                if (v && v->kind == N_SEQ) items = v;
            }
        }
    }
    y->nmem = base;
    return items;
}

static bool is_items_key(const struct node *k) {
    return k->kind == N_SCALAR && JG_LIT_EQ(k->s, k->len, "items") &&
           (!k->tag || strcmp(k->tag, "tag:yaml.org,2002:str") == 0);
}

static struct node *new_node(jg_yaml_stream *y, enum kind kind, const yaml_event_t *e) {
    struct node *n = arena_alloc(&y->arena, sizeof *n, alignof(struct node));
    if (!n) return NULL;
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->line = (unsigned)e->start_mark.line + 1;
    n->col = (unsigned)e->start_mark.column + 1;
    return n;
}

/* A copy of libyaml's text in the arena (NULL: none, or out of memory: *oom). */
static char *keep_text(jg_yaml_stream *y, const yaml_char_t *s, bool *oom) {
    if (!s) return NULL;
    char *c = arena_dup(&y->arena, (const char *)s, strlen((const char *)s));
    if (!c) *oom = true;
    return c;
}

int jg_yaml_stream_next(jg_yaml_stream *y, jg_buf *out, struct jg_doc *d, char *err,
                        size_t errlen) {
    for (;;) {
        /* A document built whole: yield it, or its items one by one. */
        if (y->root) {
            if (y->items) {
                if (y->next_item) {
                    const struct node *e = y->next_item;
                    y->next_item = e->next;
                    return emit(y, e, y->item++, out, d, err, errlen);
                }
                end_document(y);
                continue;
            }
            struct node *root = y->root;
            const struct node *items = list_items(y, root);
            if (items) {
                y->items = items;
                y->next_item = items->first;
                y->item = 0;
                continue;
            }
            int s = emit(y, root, -1, out, d, err, errlen);
            end_document(y);
            return s;
        }
        if (y->failed || y->done) return 0;
        yaml_event_t e;
        if (!yaml_parser_parse(&y->parser, &e)) {
            y->failed = true;
            unsigned line = (unsigned)y->parser.problem_mark.line + 1,
                     col = (unsigned)y->parser.problem_mark.column + 1;
            char what[400];
            if (y->parser.error == YAML_READER_ERROR || y->parser.error == YAML_MEMORY_ERROR)
                snprintf(what, sizeof what, "%s",
                         y->parser.problem ? y->parser.problem : "read error");
            else if (y->parser.context)
                snprintf(what, sizeof what, "%s (%s at line %u, column %u)", y->parser.problem,
                         y->parser.context, (unsigned)y->parser.context_mark.line + 1,
                         (unsigned)y->parser.context_mark.column + 1);
            else
                snprintf(what, sizeof what, "%s",
                         y->parser.problem ? y->parser.problem : "syntax error");
            end_document(y);
            return yerr(y, line, col, what, err, errlen);
        }
        int rc = 0;
        bool oom = false;
        struct node *n = NULL;
        /* a node straight under the List's items begins an item: it is freed once yielded */
        if (!y->skip && y->depth > 0 && y->stack[y->depth - 1]->streamed &&
            (e.type == YAML_SCALAR_EVENT || e.type == YAML_ALIAS_EVENT ||
             e.type == YAML_SEQUENCE_START_EVENT || e.type == YAML_MAPPING_START_EVENT)) {
            y->item_mark = arena_mark(&y->arena);
            y->item_anchors = y->nanchors;
        }
        switch (e.type) {
        case YAML_STREAM_END_EVENT:
            y->done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            y->skip = false;
            y->skip_depth = 0;
            y->item = 0;
            break;
        case YAML_DOCUMENT_END_EVENT:
            y->doc++;
            if (y->skip) end_document(y);
            y->skip = false;
            break;
        case YAML_ALIAS_EVENT:
            if (y->skip) break;
            n = new_node(y, N_ALIAS, &e);
            if (!n) {
                oom = true;
                break;
            }
            n->anchor = keep_text(y, e.data.alias.anchor, &oom);
            if (oom) break;
            n->target = find_anchor(y, n->anchor);
            if (!n->target) {
                char what[300];
                snprintf(what, sizeof what, "yaml: unknown anchor '%s' referenced", n->anchor);
                rc = yerr(y, n->line, n->col, what, err, errlen);
                n = NULL;
                y->skip = true;
                end_document(y);
            }
            break;
        case YAML_SCALAR_EVENT:
            if (y->skip) break;
            n = new_node(y, N_SCALAR, &e);
            if (!n) {
                oom = true;
                break;
            }
            n->s = arena_dup(&y->arena, (const char *)e.data.scalar.value, e.data.scalar.length);
            n->len = e.data.scalar.length;
            n->plain = e.data.scalar.plain_implicit;
            n->tag = keep_text(y, e.data.scalar.tag, &oom);
            if (!n->s || oom ||
                (e.data.scalar.anchor && !add_anchor(y, (const char *)e.data.scalar.anchor, n)))
                oom = true;
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            /* Skipping a document costs libyaml's tokens, and each token costs libyaml a look at
             * every open flow level: deep nesting ends the file rather than be skipped (200,000
             * unclosed '[' took 81 s to skip). */
            if (y->skip) {
                if (++y->skip_depth > MAX_DEPTH) y->failed = true;
                break;
            }
            if (y->depth >= MAX_DEPTH) {
                rc = yerr(y, (unsigned)e.start_mark.line + 1, (unsigned)e.start_mark.column + 1,
                          TOO_DEEP, err, errlen);
                end_document(y);
                y->failed = true; /* not skipped to its end: see above */
                break;
            }
            {
                bool seq = e.type == YAML_SEQUENCE_START_EVENT;
                struct node *c = new_node(y, seq ? N_SEQ : N_MAP, &e);
                if (!c) {
                    oom = true;
                    break;
                }
                const yaml_char_t *anchor =
                    seq ? e.data.sequence_start.anchor : e.data.mapping_start.anchor;
                c->tag =
                    keep_text(y, seq ? e.data.sequence_start.tag : e.data.mapping_start.tag, &oom);
                /* the List's items, straight under a top-level mapping's "items" key */
                if (seq && y->depth == 1 && y->stack[0]->kind == N_MAP && y->stack[0]->n % 2 == 1 &&
                    is_items_key(deref(y->stack[0]->last)) && !anchor)
                    c->streamed = y->listed = true;
                if (anchor && !add_anchor(y, (const char *)anchor, c)) oom = true;
                y->stack[y->depth++] = c;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (y->skip) {
                if (y->skip_depth) y->skip_depth--;
                break;
            }
            n = y->stack[--y->depth];
            break;
        default:
            break;
        }
        if (!oom && !y->skip && y->arena.live > TREE_MAX) {
            char what[200];
            snprintf(what, sizeof what,
                     "document larger than the %zu MiB limit: its tree passed %zu MiB while being "
                     "read",
                     JG_READER_MAX_DOC >> 20, TREE_MAX >> 20);
            rc = yerr(y, (unsigned)e.start_mark.line + 1, (unsigned)e.start_mark.column + 1, what,
                      err, errlen);
            n = NULL;
            end_document(y);
            y->skip = true;
        }
        if (oom) {
            rc = yerr(y, (unsigned)e.start_mark.line + 1, (unsigned)e.start_mark.column + 1,
                      "out of memory", err, errlen);
            n = NULL;
            end_document(y);
            y->skip = true;
        }
        yaml_event_delete(&e);
        if (rc) return rc;
        if (!n) continue;
        /* n is complete: attach it to its parent, or yield it */
        if (y->depth == 0) {
            if (n->kind == N_SCALAR && n->plain && n->len == 0 && !n->tag && !n->anchored)
                continue; /* an empty document (freed at its end) */
            /* a List whose items were streamed: nothing left to yield */
            bool was_list = false;
            for (const struct node *k = n->kind == N_MAP ? n->first : NULL; k && k->next;
                 k = k->next->next)
                if (k->next->kind == N_SEQ && k->next->streamed) was_list = true;
            if (was_list) {
                end_document(y);
                continue;
            }
            y->root = n;
            continue;
        }
        struct node *p = y->stack[y->depth - 1];
        if (p->streamed) {
            long i = y->item++;
            int s = emit(y, n, i, out, d, err, errlen);
            /* freed unless it defined an anchor a later item may use */
            if (y->nanchors == y->item_anchors) arena_release(&y->arena, y->item_mark);
            return s;
        }
        if (y->listed && y->depth == 1 && p->n % 2 == 0 && is_items_key(deref(n))) {
            rc = yerr(y, n->line, n->col, JG_READER_SECOND_ITEMS, err, errlen);
            y->skip = true;
            end_document(y);
            return rc;
        }
        add_kid(p, n);
    }
}

char *jg_yaml_to_json(const char *text, size_t n, const char *source, size_t max, size_t *len,
                      char *err, size_t errlen) {
    jg_yaml_stream *y = jg_yaml_stream_open(-1, text, n, source);
    if (!y) {
        snprintf(err, errlen, "%s: out of memory", source);
        return NULL;
    }
    if (max < y->limit) y->limit = max;
    jg_buf out = JG_BUF_INIT;
    struct jg_doc d;
    char *res = NULL;
    int s = jg_yaml_stream_next(y, &out, &d, err, errlen);
    if (s == 0) {
        snprintf(err, errlen, "%s: no document (the file is empty or holds only comments)", source);
    } else if (s > 0) {
        if (d.item >= 0) {
            snprintf(err, errlen,
                     "%s:%u: a List (a top-level \"items\" sequence), expected one object", source,
                     d.line);
        } else {
            unsigned line = d.line;
            jg_buf keep = JG_BUF_INIT;
            jg_buf_put(&keep, d.json, d.len);
            s = jg_yaml_stream_next(y, &out, &d, err, errlen);
            if (s > 0)
                snprintf(err, errlen,
                         "%s:%u: a second document (only one is read; the first is at line %u)",
                         source, d.line, line);
            else if (s == 0 && !keep.oom) {
                res = keep.data ? keep.data : strdup("");
                *len = keep.len;
                keep.data = NULL;
            }
            jg_buf_free(&keep);
        }
    }
    jg_buf_free(&out);
    jg_yaml_stream_close(y);
    return res;
}
