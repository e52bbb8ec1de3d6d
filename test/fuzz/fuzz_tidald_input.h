/* fuzz_tidald_input.h — the input format of the fuzz_tidald target, read by the target
 * (test/fuzz/fuzz_tidald.c, which drives tidald's code from memory) and by control_probe's
 * fuzz-replay (test/control/control_probe.c, which plays the same inputs to a real tidald
 * over its socket). test/fuzz/gen_tidald_seeds.py writes it.
 *
 * Byte 0: how tidald's reads cut the bytes (low 6 bits: at most that many bytes per read,
 * 0 = all that is there; 1 = a split at every byte boundary). Then records
 *   ctl [args]   client = ctl & 7, op = (ctl >> 3) % 7:
 *   0 SEND len BYTES           the client sends BYTES (len 0..255; cut short at the end)
 *   1 REPEAT count len BYTES   sends BYTES count + 1 times (over-long lines, 64+ partitions)
 *   2 EOF                      the client shuts its side (tidald reads EOF after the rest)
 *   3 CLOSE                    the client goes away both ways (its answers are never read)
 *   4 STALL                    the client stops / starts reading its answers (toggle)
 *   5 TIMEOUT                  the stats deadline of every pending hist / tenants stats passes
 *   6 RESTART torn             tidald is killed and started again (every connection lost, the
 *                              segment resumed); torn % 5 says what the kill interrupted:
 *                              0 nothing, 1 an update (seq odd), 2 a create (a free slot's
 *                              name written, not its flags), 3 one after nparts++, 4 a set
 *                              of an "all" partition after its mask, before its flags
 *                              (fuzz_tidald; control_probe restarts nothing)
 * In BYTES, '$' stands for the last "stats SEQ" the client was sent (what a tenant answering
 * needs) and '%' for the REPEAT index: those two characters are never sent as themselves.
 * A client's first record connects it; after EOF or CLOSE its next record opens a new
 * connection once tidald has let the old one go. Past TIDAL_FUZZ_MAX_FEED bytes sent (all
 * clients, after '$' and '%'), the rest is not sent: an input's time stays bounded.
 * Header-only: static inline. */
#ifndef TIDAL_FUZZ_TIDALD_INPUT_H
#define TIDAL_FUZZ_TIDALD_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TIDAL_FUZZ_CLIENTS 8
#define TIDAL_FUZZ_NOPS 7
#define TIDAL_FUZZ_MAX_FEED (32u << 10) /* bytes sent per input, all clients; the rest is dropped */

enum {
    TIDAL_FUZZ_SEND,
    TIDAL_FUZZ_REPEAT,
    TIDAL_FUZZ_EOF,
    TIDAL_FUZZ_CLOSE,
    TIDAL_FUZZ_STALL,
    TIDAL_FUZZ_TIMEOUT,
    TIDAL_FUZZ_RESTART,
};

typedef struct tidal_fuzz_rec {
    unsigned op, client;
    unsigned count;             /* SEND: 1; REPEAT: 1..256; RESTART: the torn byte */
    const unsigned char *bytes; /* SEND/REPEAT */
    size_t len;
} tidal_fuzz_rec;

/* The chunk size in byte 0 (0 for an empty input); *pos is set past it. */
static inline size_t tidal_fuzz_chunk(const unsigned char *data, size_t size, size_t *pos)
{
    *pos = size ? 1 : 0;
    return size ? (size_t)(data[0] & 0x3f) : 0;
}

/* The record at *pos: 1 and *pos moved past it, or 0 at the end. */
static inline int tidal_fuzz_next(const unsigned char *data, size_t size, size_t *pos, tidal_fuzz_rec *r)
{
    size_t i = *pos;
    if (i >= size) return 0;
    unsigned ctl = data[i++];
    r->op = (ctl >> 3) % TIDAL_FUZZ_NOPS;
    r->client = ctl & 7;
    r->count = 1;
    r->bytes = NULL;
    r->len = 0;
    if (r->op == TIDAL_FUZZ_SEND || r->op == TIDAL_FUZZ_REPEAT) {
        if (r->op == TIDAL_FUZZ_REPEAT) r->count = i < size ? data[i++] + 1u : 1u;
        size_t len = i < size ? data[i++] : 0;
        if (len > size - i) len = size - i;
        r->bytes = data + i;
        r->len = len;
        i += len;
    } else if (r->op == TIDAL_FUZZ_RESTART) {
        r->count = i < size ? data[i++] : 0;
    }
    *pos = i;
    return 1;
}

/* Byte b of a record as sent: itself, or for '$' / '%' the decimal number; returns the
 * length written to out (at most 11 bytes). */
static inline size_t tidal_fuzz_expand(unsigned char b, uint32_t stats_seq, unsigned index, char out[12])
{
    if (b == '$' || b == '%') return (size_t)snprintf(out, 12, "%u", b == '$' ? (unsigned)stats_seq : index);
    out[0] = (char)b;
    return 1;
}

#endif
