/* netcode/faults.c: netcode's faults for the simulator, a netsim filter
 * (netsim.h): lose challenge or response packets, or every datagram of one
 * direction from a time on (a side that goes silent). It reads only the
 * prefix byte, so it needs no key. */
#include <string.h>

#include "netcode.h"

void netcode_faults_init(netcode_faults_t *faults)
{
    memset(faults, 0, sizeof *faults);
    faults->silent_at[0] = faults->silent_at[1] = -1;
}

int netcode_faults_filter(void *context, int dir, const uint8_t *packet, int bytes)
{
    netcode_faults_t *f = context;
    if (bytes < 1 || dir < 0 || dir > 1) return 0;
    if (f->silent_at[dir] >= 0 && f->now >= f->silent_at[dir]) {
        f->dropped++;
        return 1;
    }
    int type = packet[0] & 0x0f;
    int *budget = NULL;
    if (dir == 1 && packet[0] != 0 && type == NETCODE_CHALLENGE) budget = &f->drop_challenges;
    if (dir == 0 && packet[0] != 0 && type == NETCODE_RESPONSE) budget = &f->drop_responses;
    if (!budget || *budget == 0) return 0;
    if (*budget > 0) (*budget)--;
    f->dropped++;
    return 1;
}
