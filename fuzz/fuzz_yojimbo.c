/*
 * fuzz_yojimbo: libFuzzer harness for yojimbo's connection layer
 * (endpoints/src/yojimbo/): arbitrary bytes as connection packets.
 *
 * Input: a config byte (bits 0-1 choose the channel layout: ro,ro; uu;
 * ro:100:10:3,uu:50:7:2,ro; ro:1:1:1), then the packet.
 *
 * What it checks (abort on failure): a packet the reader takes, written back,
 * fits (unless two of its consecutive ids are equal, which only the 32-bit
 * relative form can say) and reads again to the same entries (channels, ids, types, sequences,
 * fragment fields and bytes), and writing that gives the same bytes again;
 * the reader's verdict and a connection's agree; a connection that took the
 * packet still writes a packet its own reader takes. ASan and UBSan check the
 * rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yojimbo.h"
#include "harness.h"

static const char *const layouts[] = {"ro,ro", "uu", "ro:100:10:3,uu:50:7:2,ro", "ro:1:1:1"};

/* A reader can take ids the writer cannot express: the 32-bit form of the
 * relative id may land on the previous id modulo 65536. */
static int repeated_id(const yojimbo_packet_t *p)
{
    for (int i = 0; i < p->num_entries; i++)
        for (int k = 1; !p->entry[i].block && k < p->entry[i].num_messages; k++)
            if (p->entry[i].messages[k].id == p->entry[i].messages[k - 1].id) return 1;
    return 0;
}

static void same_entries(const yojimbo_packet_t *a, const yojimbo_packet_t *b)
{
    REQUIRE(a->num_entries == b->num_entries);
    for (int i = 0; i < a->num_entries; i++) {
        const yojimbo_entry_t *x = &a->entry[i], *y = &b->entry[i];
        REQUIRE(x->channel == y->channel && x->block == y->block);
        if (x->block) {
            const yojimbo_fragment_t *f = &x->fragment, *g = &y->fragment;
            REQUIRE(f->message_id == g->message_id && f->num_fragments == g->num_fragments &&
                    f->fragment_id == g->fragment_id && f->fragment_size == g->fragment_size);
            REQUIRE(memcmp(f->data, g->data, (size_t)f->fragment_size) == 0);
            if (f->fragment_id == 0) REQUIRE(f->message.type == g->message.type && f->message.sequence == g->message.sequence);
            continue;
        }
        REQUIRE(x->num_messages == y->num_messages);
        for (int k = 0; k < x->num_messages; k++) {
            const yojimbo_message_t *m = &x->messages[k], *n = &y->messages[k];
            REQUIRE(m->id == n->id && m->type == n->type && m->sequence == n->sequence && m->block_size == n->block_size);
            if (m->block) REQUIRE(memcmp(m->block, n->block, (size_t)m->block_size) == 0);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 20000) return 0;
    yojimbo_config_t config;
    char error[200];
    REQUIRE(yojimbo_parse_channels(layouts[data[0] & 3], &config, error, sizeof error) == 0);
    const uint8_t *packet = data + 1;
    int bytes = (int)size - 1;
    static yojimbo_packet_t p, q;
    static uint8_t out[70000], again[70000];
    int result = yojimbo_read_packet(&config, packet, bytes, &p);
    REQUIRE(result >= 0 && result < YOJIMBO_READ_RESULT_COUNT);
    if (result == YOJIMBO_READ_OK && !repeated_id(&p)) {
        int n = yojimbo_write_packet(&config, &p, out, sizeof out);
        REQUIRE(n > 0 && n <= bytes);
        REQUIRE(yojimbo_read_packet(&config, out, n, &q) == YOJIMBO_READ_OK);
        same_entries(&p, &q);
        REQUIRE(yojimbo_write_packet(&config, &q, again, sizeof again) == n);
        REQUIRE(memcmp(out, again, (size_t)n) == 0);
        yojimbo_packet_free(&q);
    }
    yojimbo_packet_free(&p);

    yojimbo_connection_t *c = yojimbo_connection_create(&config, 0, NULL, NULL);
    REQUIRE(c != NULL);
    int ok = yojimbo_connection_process(c, 0, packet, bytes);
    REQUIRE(ok == (result == YOJIMBO_READ_OK && !yojimbo_connection_error(c)));
    if (ok) {
        yojimbo_message_t m = {YOJIMBO_TEST_MESSAGE, 0, 3, NULL, 0};
        yojimbo_connection_send(c, 0, &m);
        yojimbo_connection_advance_time(c, 1.0);
        int n = yojimbo_connection_generate(c, 1, out, 8192);
        REQUIRE(n > 0);
        REQUIRE(yojimbo_read_packet(&config, out, n, &q) == YOJIMBO_READ_OK);
        yojimbo_packet_free(&q);
        for (int ch = 0; ch < config.num_channels; ch++)
            while (yojimbo_connection_receive(c, ch, &m)) free(m.block);
    }
    yojimbo_connection_destroy(c);
    return 0;
}
