/* decode/index_pass.h: the structural pass's loop, included once per level by index.c with
 * PASS_NAME (the function), PASS_TARGET (its target attribute), CLASSIFY (a function of that
 * target filling a struct blockbits for 64 bytes) and PREFIX_XOR (prefix_xor or its carry-less
 * multiply) defined. Not a header of its own. */

PASS_TARGET static bool PASS_NAME(struct sindex *ix, struct grammar *g) {
    const unsigned char *body = (const unsigned char *)ix->body;
    size_t len = ix->len;
    uint64_t odd_carry = 0; /* the previous block ended in an odd run of backslashes */
    uint64_t in_carry = 0;  /* all ones when the previous block ended inside a string */
    uint64_t scalar_carry = 0;
    unsigned state = g->state; /* a state << 8, as in trans */
    unsigned char tail[64];
    uint32_t *stack = g->stack, *open = ix->open, *close = ix->close;
    int depth = g->depth;
    size_t n_open = ix->n_open;
    for (size_t base = 0, w = 0; base < len; base += 64, w++) {
        const unsigned char *blk = body + base;
        if (len - base < 64) { /* the last block, padded with spaces (whitespace, never indexed) */
            memset(tail, ' ', sizeof tail);
            memcpy(tail, blk, len - base);
            blk = tail;
        }
        struct blockbits m;
        CLASSIFY(blk, &m);
        if (m.high && g->high_from == SIZE_MAX) g->high_from = base;
        uint64_t escaped = m.bslash | odd_carry ? escaped_bits(m.bslash, &odd_carry) : 0;
        uint64_t q = m.quote & ~escaped;
        uint64_t inside = PREFIX_XOR(q) ^ in_carry; /* opening quote and contents */
        in_carry = (uint64_t)((int64_t)inside >> 63);
        ix->quotes[w] = q;
        if (m.ctrl & inside) return false; /* a raw control byte in a string */
        if (escaped) {
            /* escaped '"' and '\\' (nearly all escapes) are valid: the rest are looked at */
            uint64_t esc_in = escaped & inside & ~(m.quote | m.bslash);
            if (esc_in && !check_escapes(g, ix, esc_in, base)) return false;
        }
        uint64_t outside = ~(inside | q);
        uint64_t scalar = outside & ~(m.op | m.ws);
        uint64_t s = (m.op & outside) | (q & inside) | (scalar & ~(scalar << 1 | scalar_carry));
        scalar_carry = scalar >> 63;
        while (s) { /* the grammar: one table lookup per indexed position */
            size_t r = (unsigned)__builtin_ctzll(s);
            s &= s - 1;
            state = trans[state + blk[r]];
            if (__builtin_expect(state < T_SLOW, 1)) continue; /* '"', ':', ',': most positions */
            unsigned t = state;
            size_t pos = base + r;
            if (t == T_CLOSE) {
                uint32_t top = stack[depth--];
                close[top >> 4] = (uint32_t)pos;
                state = (top & 15) << 8;
            } else if (t >= T_OPEN && t < T_CLOSE) {
                if (depth >= JG_MAX_JSON_DEPTH) return false;
                if (n_open == ix->cap_open) {
                    ix->n_open = n_open;
                    if (!grow(ix)) return false;
                    open = ix->open, close = ix->close;
                }
                open[n_open] = (uint32_t)pos;
                stack[++depth] = (uint32_t)n_open++ << 4 | (t & 15);
                state = (t >> 4 & 15) << 8;
            } else if (t < T_OPEN && scalar_ok(ix, pos)) {
                state = (t & 15) << 8;
            } else {
                return false;
            }
        }
    }
    g->state = state;
    g->depth = depth;
    ix->n_open = n_open;
    return in_carry == 0;
}
