#!/usr/bin/env python3
"""bench/netgame-endpoints.py: our netgame endpoint against the ideal of the
2008 article, from netgame-sim truth files (virtual time, so the figures are
exact and the same on every machine).

    bench/netgame-endpoints.py [-b BUILD_DIR]

Measures, per side (client A and server B), over seeds 1..5:
- time from connecting to Good mode on a quiet link, against the article's
  "about 4 s" (the penalty starts at 4 s and only connected time counts);
- packets per second sent in Bad mode (target 10) and in Good mode (30);
- the smoothed RTT against the link's RTT (the endpoint's samples also hold
  the wait for the peer's next packet: 1/30 s at most in Good mode);
- the share of packets the endpoint counts lost against the link's loss;
- after a step of the RTT to 400 ms (a --spike), how long until Bad mode.
Prints a markdown report on stdout. Exit 0, 1 when netgame-sim fails, 2 bad use.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(sim, work, name, args):
    truth = os.path.join(work, name + '.json')
    subprocess.run([sim, '-q', '--truth', truth] + args, check=True)
    return json.load(open(truth))


def rates(truth, side):
    """Packets per second sent by side in Bad mode (between connecting and the
    first switch) and in Good mode (after the first switch, whole seconds)."""
    s = next(x for x in truth['sides'] if x['side'] == side)
    packets = [p for p in truth['packets'] if p['from'] == side]
    sent = [p['time'] for p in packets]
    switches = s['mode_switches']
    if not switches or s['connected_at'] is None:
        return None, None
    good_at = switches[0]['time']
    end = switches[1]['time'] if len(switches) > 1 else truth['result']['end_time']
    bad = sum(1 for p in packets if p['mode'] == 'bad' and s['connected_at'] < p['time'] <= good_at) / (good_at - s['connected_at'])
    # Good: skip the catch-up burst of the switching update, count whole seconds.
    start = good_at + 1
    seconds = int(end - start)
    good = sum(1 for t in sent if start <= t < start + seconds) / seconds if seconds > 0 else None
    return bad, good


def main(argv):
    build = os.environ.get('CHUNK_BUILD_DIR', 'build')
    if len(argv) == 3 and argv[1] == '-b':
        build = argv[2]
    elif len(argv) != 1:
        print(__doc__.strip())
        return 0 if len(argv) == 2 and argv[1] in ('-h', '--help') else 2
    sim = os.path.join(build, 'bin', 'netgame-sim')
    if not os.access(sim, os.X_OK):
        sys.stderr.write('netgame-endpoints.py: %s not built\n' % sim)
        return 2
    work = tempfile.mkdtemp(prefix='netgame-bench.')
    seeds = range(1, 6)
    print('### Quiet link: time to Good, send rates, RTT (seeds 1..5, 40 s each)\n')
    print('| one-way latency | side | connect -> Good (s) | Bad pps | Good pps | smoothed RTT at 40 s (ms) | link RTT (ms) | mode switches per run |')
    print('|---|---|---|---|---|---|---|---|')
    for latency in (0.005, 0.025, 0.05, 0.075, 0.1):
        rows = {'a': [], 'b': []}
        for seed in seeds:
            t = run(sim, work, 'quiet', ['--latency', str(latency), '--jitter', '2ms', '--duration', '40', '--seed', str(seed)])
            for side in 'ab':
                s = next(x for x in t['sides'] if x['side'] == side)
                if not s['mode_switches']:
                    rows[side].append(None)
                    continue
                bad, good = rates(t, side)
                rows[side].append((s['mode_switches'][0]['time'] - s['connected_at'], bad, good, s['rtt'] * 1000,
                                   len(s['mode_switches'])))
        for side in 'ab':
            r = [x for x in rows[side] if x is not None]
            if len(r) < len(rows[side]):
                print('| %d ms | %s | never Good in 40 s (%d of %d runs) | | | | %.0f | |' % (
                    latency * 1000, 'client' if side == 'a' else 'server', len(rows[side]) - len(r), len(rows[side]),
                    latency * 2000))
                continue
            goods = [x[2] for x in r if x[2] is not None]
            print('| %d ms | %s | %.3f (%.3f..%.3f) | %.2f | %s | %.1f | %.0f | %s |' % (
                latency * 1000, 'client' if side == 'a' else 'server', statistics.median(x[0] for x in r),
                min(x[0] for x in r), max(x[0] for x in r), statistics.median(x[1] for x in r),
                '%.2f' % statistics.median(goods) if goods else 'n/a', statistics.median(x[3] for x in r),
                latency * 2000, '/'.join(str(x[4]) for x in r)))
    print('\nIdeal: Good 4 s after connecting, 10 and 30 packets/s.\n')

    print('### Loss counted by the endpoint against the link (seeds 1..5, 60 s, 25 ms each way)\n')
    print('| link loss (each way) | client: lost / sent | server: lost / sent | link A->B lost / sent |')
    print('|---|---|---|---|')
    for loss in ('1%', '10%', '30%'):
        client, server, link = [], [], []
        for seed in seeds:
            t = run(sim, work, 'loss', ['--loss', loss, '--latency', '25ms', '--duration', '60', '--seed', str(seed)])
            for side, out in (('a', client), ('b', server)):
                c = next(x for x in t['sides'] if x['side'] == side)['counters']
                out.append(c['packets_lost'] / c['packets_sent'])
            l = t['links'][0]
            link.append(l['lost'] / l['sent'])
        print('| %s | %.2f%% | %.2f%% | %.2f%% |' % (loss, 100 * statistics.mean(client), 100 * statistics.mean(server),
                                                 100 * statistics.mean(link)))
    print('\nThe endpoint counts a packet lost when no ack came within 1 s; with acks'
          ' lost as well, a packet whose acks all went missing (33 of them in a row) counts too.\n')

    print('### RTT step to 400 ms: from the step to Bad mode (seeds 1..5)\n')
    print('| path RTT before | step at | client: step -> Bad (s) | server: step -> Bad (s) | penalty after |')
    print('|---|---|---|---|---|')
    for latency in (0.025, 0.05):
        extra = 0.2 - latency
        res = {'a': [], 'b': []}
        penalty = set()
        for seed in seeds:
            t = run(sim, work, 'step', ['--latency', str(latency), '--spike', '8:10:%f' % extra, '--duration', '12',
                                        '--seed', str(seed)])
            for side in 'ab':
                s = next(x for x in t['sides'] if x['side'] == side)
                bad = [w for w in s['mode_switches'] if w['mode'] == 'bad']
                res[side].append(bad[0]['time'] - 8 if bad else float('nan'))
                if bad:
                    penalty.add(bad[0]['penalty'])
        print('| %d ms | 8 s | %.2f | %.2f | %s s |' % (latency * 2000, statistics.median(res['a']),
                                                  statistics.median(res['b']), '/'.join('%g' % p for p in sorted(penalty))))
    print('\nThe smoothed RTT moves 10% of the way to each sample, so it needs a number of'
          ' samples to cross 250 ms; the article gives no figure for this.')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
